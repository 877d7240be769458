import APITraceCapture
import Testing

@Suite("Route normalization and traceparent")
struct RouteNormalizerTests {
    @Test("ids become {id}; words, versions and short hex stay", arguments: [
        ("/apps/42", "/apps/{id}"),
        ("/apps/42/builds/7", "/apps/{id}/builds/{id}"),
        ("/users/6F9619FF-8B86-D011-B42D-00CF4FC964FF", "/users/{id}"),
        ("/commits/3f2a9c1e0b7d4e5f6a7b", "/commits/{id}"),
        ("/apps/42?token=x&page=2", "/apps/{id}"),
        ("/v2/apps/latest", "/v2/apps/latest"),
        ("/colors/beef", "/colors/beef"),
        ("/hashes/deadbeefdeadbeef", "/hashes/deadbeefdeadbeef"),
        ("/items/", "/items/"),
        ("", "/"),
    ])
    func normalize(path: String, route: String) {
        #expect(RouteNormalizer().normalize(path) == route)
    }

    @Test("traceparent values round-trip and invalid ones are refused")
    func traceParent() {
        let parent = TraceParent.random()
        #expect(TraceParent(headerValue: parent.headerValue) == parent)
        #expect(parent.headerValue.count == 55)
        // The W3C Trace Context example, and flags written as two lowercase hex digits.
        let example = TraceParent(traceID: "4bf92f3577b34da6a3ce929d0e0e4736", parentID: "00f067aa0ba902b7", flags: 1)
        #expect(example.headerValue == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(TraceParent(traceID: "ab", parentID: "cd", flags: 0xfe).headerValue == "00-ab-cd-fe")
        #expect(TraceParent(headerValue: "00-00000000000000000000000000000000-00f067aa0ba902b7-01") == nil)
        #expect(TraceParent(headerValue: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01") == nil)
        #expect(TraceParent(headerValue: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7") == nil)
        #expect(TraceParent.random().traceID != TraceParent.random().traceID)
    }
}
