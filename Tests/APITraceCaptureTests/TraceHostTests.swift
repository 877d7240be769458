@testable import APITraceCapture
import Foundation
import Testing

@Suite("Host read from URL text")
struct TraceHostTests {
    @Test("agrees with Foundation's URL.host", arguments: [
        "https://api.example.com/apps/1?token=x",
        "http://127.0.0.1:8080/a",
        "https://user:pw@api.example.com:443/x#frag",
        "http://[::1]:8080/apps",
        "https://api.example.com",
        "https://api.example.com?x=1",
        "https://xn--caf-dma.example/",
        "http://h%C3%A9.example/a",
    ])
    func matchesFoundation(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(url.traceHost == url.host)
    }
}

@Suite("Route read from URL text")
struct TraceRouteTests {
    @Test("agrees with normalizing Foundation's URL.path", arguments: [
        "https://api.example.com/apps/1?token=x",
        "http://127.0.0.1:8080/apps/42/builds/7",
        "https://user:pw@api.example.com:443/x#frag",
        "https://api.example.com",
        "https://api.example.com?x=1",
        "https://api.example.com/a%20b/12",
        "https://api.example.com/users/6F9619FF-8B86-D011-B42D-00CF4FC964FF/",
    ])
    func matchesFoundation(_ text: String) throws {
        let url = try #require(URL(string: text))
        let normalizer = RouteNormalizer()
        #expect(url.traceRoute(normalizer) == normalizer.normalize(url.path))
    }
}
