import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Docs/trace-format.md claims to be precise enough to write a compatible producer from it alone.
/// This producer is written in Python from the document (gzip + json, nothing of ours), and the
/// Swift reader must read every event type it writes.
@Suite("A producer written from the documented format")
struct IndependentProducerTests {
    static let producer = #"""
        import gzip, json, sys
        lines = [
          {"type": "header", "format": "apitrace", "version": 1, "producer": "py1", "app": "PyApp", "started": "2026-11-22T10:00:00.000Z"},
          {"type": "request", "ts": "2026-11-22T10:00:01.250Z", "session": "s", "method": "GET", "route": "/apps/{id}", "host": "h", "status": 503, "duration_ms": 12.5, "bytes_in": 10, "bytes_out": 0, "attempt": 2},
          {"type": "request", "ts": "2026-11-22T10:00:02Z", "method": "POST", "route": "/news", "duration_ms": 3000, "error": "URLError.timedOut", "status": None},
          {"type": "decode_failure", "ts": "2026-11-22T10:00:03.000+00:00", "route": "/apps", "entity": "App", "kind": "keyNotFound", "path": "data.apps[3].stability", "key": "stability", "message": "missing"},
          {"type": "error", "ts": "2026-11-22T10:00:04.000Z", "identity": "E.e", "message": "m", "user_info": {"a": "b"}, "underlying": ["U.u"], "line": 7},
          {"type": "sse", "ts": "2026-11-22T10:00:05.000Z", "phase": "reconnect", "route": "/s", "attempt": 3, "delay_ms": 1500, "last_event_id": "42"},
          {"type": "log", "ts": "2026-11-22T10:00:06.000Z", "level": "info", "message": "hello", "metadata": {"k": "v"}},
          {"type": "dropped", "ts": "2026-11-22T10:00:07.000Z", "count": 5, "reason": "buffer_full"},
          {"type": "span", "ts": "2026-11-22T10:00:08.000Z", "name": "a type this reader does not know"},
        ]
        with gzip.open(sys.argv[1], "wt", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        """#

    @Test("every documented event type written by Python's gzip and json modules is read back")
    func readsPythonTrace() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("20261122T100000Z-py1-0001.jsonl.gz")
        let made = try await runOffPool("/usr/bin/env", ["python3", "-c", Self.producer, path])
        try #require(made.status == 0, "\(String(decoding: made.stderr, as: UTF8.self))")
        var events: [TraceEvent] = []
        let result = TraceFileReader(path: path).forEachEvent { events.append($0) }
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        #expect(result.header?.app == "PyApp")
        #expect(result.unknownTypes == 1)
        #expect(events.map(\.type) == ["request", "request", "decode_failure", "error", "sse", "log", "dropped"])
        guard events.count == 7 else { return }
        #expect(events[0].timestamp.rfc3339 == "2026-11-22T10:00:01.250Z")
        #expect(events[0].payload == .request(.init(method: "GET", route: "/apps/{id}", host: "h", status: 503, durationMs: 12.5, bytesIn: 10, bytesOut: 0, attempt: 2)))
        #expect(events[1].payload == .request(.init(method: "POST", route: "/news", durationMs: 3000, error: "URLError.timedOut")))
        #expect(events[2].timestamp.rfc3339 == "2026-11-22T10:00:03.000Z")
        #expect(events[3].payload == .error(.init(identity: "E.e", message: "m", userInfo: ["a": "b"], underlying: ["U.u"], line: 7)))
        #expect(events[4].payload == .sse(.init(phase: .reconnect, route: "/s", attempt: 3, delayMs: 1500, lastEventID: "42")))
        #expect(events[6].payload == .dropped(.init(count: 5, reason: "buffer_full")))
    }
}
