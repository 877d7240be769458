import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("websocket trace event")
struct WebSocketTraceEventTests {
    static let full = TraceEvent(
        timestamp: TraceTimestamp(millisecondsSince1970: 1_795_341_600_123), session: "s-1",
        .websocket(.init(
            phase: .close, route: "/live/{id}", attempt: 3, code: 1006, reason: "ping_timeout", closedBy: "client",
            durationMs: 61_000.5, messagesIn: 120, messagesOut: 4, bytesIn: 9_876, bytesOut: 321, pings: 2,
            pingRTTMs: 12.25, silenceMs: 10_400)))

    @Test("encodes and decodes to the same event, every phase")
    func roundTrip() throws {
        let events = [
            Self.full,
            TraceEvent(timestamp: .init(millisecondsSince1970: 0), .websocket(.init(phase: .open, route: "/live", attempt: 1, durationMs: 4))),
            TraceEvent(timestamp: .init(millisecondsSince1970: 0), .websocket(.init(phase: .reconnect, route: "/live", attempt: 2, delayMs: 750))),
            TraceEvent(timestamp: .init(millisecondsSince1970: 0), .websocket(.init(phase: .fail, route: "/live", attempt: 10, reason: "refused", status: 403))),
        ]
        for event in events {
            #expect(try TraceLine.decode(event.jsonLine) == .event(event))
        }
    }

    @Test("a line written by another producer (Python's json) decodes field by field")
    func independentProducer() async throws {
        let script = """
            import json
            print(json.dumps({"type": "websocket", "ts": "2026-11-22T10:00:00.123Z", "session": "s-1", "phase": "close",
              "route": "/live/{id}", "attempt": 3, "code": 1006, "reason": "ping_timeout", "closed_by": "client",
              "duration_ms": 61000.5, "messages_in": 120, "messages_out": 4, "bytes_in": 9876, "bytes_out": 321,
              "pings": 2, "ping_rtt_ms": 12.25, "silence_ms": 10400, "future_field": [1, 2]}))
            """
        let result = try await runOffPool("/usr/bin/env", ["python3", "-c", script])
        let line = String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try TraceLine.decode(line) == .event(Self.full))
    }

    @Test("out-of-range fields are refused, naming the field")
    func outOfRange() {
        let bad = #"{"type":"websocket","ts":"2026-11-22T10:00:00Z","phase":"close","code":70000}"#
        #expect { try TraceLine.decode(bad) } throws: { String(describing: $0).contains("code") }
        let negative = #"{"type":"websocket","ts":"2026-11-22T10:00:00Z","phase":"close","messages_in":-1}"#
        #expect { try TraceLine.decode(negative) } throws: { String(describing: $0).contains("messages_in") }
        let missing = #"{"type":"websocket","ts":"2026-11-22T10:00:00Z","route":"/x"}"#
        #expect { try TraceLine.decode(missing) } throws: { String(describing: $0).contains("phase") }
    }
}
