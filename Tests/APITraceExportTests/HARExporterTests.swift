import APITraceExport
import APITraceFormat
import Foundation
import Testing

@Suite("HAR export")
struct HARExporterTests {
    let t = TraceTimestamp(millisecondsSince1970: 1_795_341_600_500)

    func archive(_ events: [TraceEvent], session: String? = nil) throws -> [String: Any] {
        var har = HARExporter(session: session)
        events.forEach { har.add($0) }
        return try #require(try JSONSerialization.jsonObject(with: har.archive()) as? [String: Any])
    }

    @Test("every entry has the fields HAR 1.2 requires, with the right types")
    func requiredFields() throws {
        let root = try archive([
            TraceEvent(timestamp: t, session: "s1", traceID: "abc", .request(.init(method: "GET", route: "/apps/{id}", host: "api.example.com", status: 200, durationMs: 250, bytesIn: 1200, bytesOut: 0))),
            TraceEvent(timestamp: t, .request(.init(method: "POST", route: "/news", host: "api.example.com", durationMs: 10_000, error: "URLError.timedOut", attempt: 2))),
            TraceEvent(timestamp: t, .log(.init(level: "info", message: "not a request"))),
        ])
        let log = try #require(root["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let creator = try #require(log["creator"] as? [String: Any])
        #expect(creator["name"] is String && creator["version"] is String)
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 2)
        for entry in entries {
            #expect(entry["startedDateTime"] is String)
            #expect(entry["time"] is NSNumber)
            #expect(entry["cache"] is [String: Any])
            let request = try #require(entry["request"] as? [String: Any])
            for key in ["method", "url", "httpVersion"] { #expect(request[key] is String, "request.\(key)") }
            for key in ["cookies", "headers", "queryString"] { #expect(request[key] is [Any], "request.\(key)") }
            for key in ["headersSize", "bodySize"] { #expect(request[key] is NSNumber, "request.\(key)") }
            #expect(URL(string: request["url"] as! String) != nil)
            let response = try #require(entry["response"] as? [String: Any])
            for key in ["status", "headersSize", "bodySize"] { #expect(response[key] is NSNumber, "response.\(key)") }
            for key in ["statusText", "httpVersion", "redirectURL"] { #expect(response[key] is String, "response.\(key)") }
            for key in ["cookies", "headers"] { #expect(response[key] is [Any], "response.\(key)") }
            let content = try #require(response["content"] as? [String: Any])
            #expect(content["size"] is NSNumber && content["mimeType"] is String)
            let timings = try #require(entry["timings"] as? [String: Any])
            for key in ["send", "wait", "receive"] {
                #expect(((timings[key] as? NSNumber)?.doubleValue ?? -1) >= 0, "timings.\(key)")
            }
        }
    }

    @Test("measured phases become HAR timings that add up to the entry's time; the protocol its HTTP version")
    func phases() throws {
        let root = try archive([
            TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/a", status: 200, durationMs: 120, timing: .init(
                dnsMs: 5, connectMs: 40, tlsMs: 25, firstByteMs: 90, networkProtocol: "h2", reusedConnection: false)))),
            TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/b", status: 200, durationMs: 30, timing: .init(
                firstByteMs: 20, networkProtocol: "http/1.1", reusedConnection: true)))),
        ])
        let entries = (root["log"] as! [String: Any])["entries"] as! [[String: Any]]
        let byRoute = Dictionary(uniqueKeysWithValues: entries.map { ($0["_route"] as! String, $0) })
        func timings(_ route: String) -> [String: Double] {
            (byRoute[route]!["timings"] as! [String: Any]).mapValues { ($0 as! NSNumber).doubleValue }
        }
        // HAR 1.2: time is the sum of the timings that apply (not -1), `ssl` being part of `connect`.
        for route in ["/a", "/b"] {
            let sum = timings(route).filter { $0.key != "ssl" && $0.value >= 0 }.values.reduce(0, +)
            #expect(abs(sum - (byRoute[route]!["time"] as! NSNumber).doubleValue) < 0.001, "\(route)")
        }
        #expect(timings("/a") == ["blocked": -1, "dns": 5, "connect": 40, "ssl": 25, "send": 0, "wait": 45, "receive": 30])
        #expect(timings("/b") == ["blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 20, "receive": 10])
        #expect((byRoute["/a"]!["request"] as! [String: Any])["httpVersion"] as? String == "HTTP/2")
        #expect((byRoute["/b"]!["response"] as! [String: Any])["httpVersion"] as? String == "HTTP/1.1")
        #expect(byRoute["/a"]!["_reusedConnection"] as? Bool == false)
        #expect(byRoute["/b"]!["_reusedConnection"] as? Bool == true)
    }

    @Test("values come from the events: start is end minus duration, failures are status 0 with the error")
    func values() throws {
        let root = try archive([
            TraceEvent(timestamp: t, session: "s1", traceID: "abc", .request(.init(method: "GET", route: "/apps/{id}", host: "api.example.com", status: 404, durationMs: 250, bytesIn: 1200, bytesOut: 0))),
            TraceEvent(timestamp: t, .request(.init(method: "POST", route: "/news", durationMs: 100, error: "URLError.timedOut", attempt: 2))),
        ])
        let entries = (root["log"] as! [String: Any])["entries"] as! [[String: Any]]
        // Sorted by start: the 250 ms request started first.
        let first = entries[0], second = entries[1]
        #expect(first["startedDateTime"] as? String == "2026-11-22T10:00:00.250Z")
        #expect((first["request"] as! [String: Any])["url"] as? String == "https://api.example.com/apps/%7Bid%7D")
        #expect((first["response"] as! [String: Any])["status"] as? Int == 404)
        #expect((first["response"] as! [String: Any])["bodySize"] as? Int == 1200)
        #expect(first["_traceId"] as? String == "abc")
        #expect(first["_route"] as? String == "/apps/{id}")
        #expect(second["startedDateTime"] as? String == "2026-11-22T10:00:00.400Z")
        #expect((second["response"] as! [String: Any])["status"] as? Int == 0)
        #expect((second["response"] as! [String: Any])["statusText"] as? String == "URLError.timedOut")
        #expect(second["_attempt"] as? Int == 2)
    }

    @Test("a session filter keeps only that session's requests")
    func sessionFilter() throws {
        let root = try archive([
            TraceEvent(timestamp: t, session: "a", .request(.init(method: "GET", route: "/a", status: 200, durationMs: 1))),
            TraceEvent(timestamp: t, session: "b", .request(.init(method: "GET", route: "/b", status: 200, durationMs: 1))),
        ], session: "b")
        let entries = (root["log"] as! [String: Any])["entries"] as! [[String: Any]]
        #expect(entries.map { $0["_route"] as? String } == ["/b"])
    }
}
