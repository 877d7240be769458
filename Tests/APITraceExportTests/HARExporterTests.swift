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
