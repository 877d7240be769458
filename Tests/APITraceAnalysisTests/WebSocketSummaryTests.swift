import APITraceAnalysis
import APITraceFormat
import Testing

/// The aggregator's two ways in count `websocket` events alike, and summaries merge to the same
/// result in any order.
struct WebSocketSummaryTests {
    static func events() -> [TraceEvent] {
        var out: [TraceEvent] = []
        for i in 0..<400 {
            let ts = TraceTimestamp(millisecondsSince1970: 1_795_000_000_000 + Int64(i) * 1500)
            let route = "/news/{id}/comments/\(i % 3)"
            let w: TraceEvent.WebSocket = switch i % 6 {
            case 0: .init(phase: .open, route: route, attempt: 1, durationMs: 12.5)
            case 1: .init(phase: .close, route: route, attempt: 1, code: [1000, 1001, 1006, 1011, 4001][i % 5], reason: ["normal", "ping_timeout", "abnormal"][i % 3],
                          closedBy: "server", durationMs: Double(i) * 1000.25, messagesIn: i, messagesOut: 2, bytesIn: Int64(i * 10), bytesOut: 5,
                          pings: 1, pingRTTMs: 3, silenceMs: Double(i) * 7.5)
            case 2: .init(phase: .close, route: route, attempt: 2, code: 1006, reason: "refused", closedBy: "network", durationMs: 40)
            case 3: .init(phase: .reconnect, route: route, attempt: 2, delayMs: Double(250 + i))
            case 4: .init(phase: .fail, route: route, attempt: 3, reason: "refused")
            default: .init(phase: .init(rawValue: "handover"), route: route)
            }
            out.append(TraceEvent(timestamp: ts, session: "s\(i % 7)", .websocket(w)))
        }
        return out
    }

    @Test("the raw-line path and the decoded-event path give the same WebSockets section")
    func linePathAgreesWithEventPath() throws {
        var decoded = TraceAggregator()
        var lines = TraceAggregator()
        for event in Self.events() {
            decoded.add(event)
            var out = JSONOutput()
            event.encode(to: &out)
            let outcome = out.bytes.withUnsafeBytes { lines.add(line: $0) }
            #expect(outcome == .counted)
        }
        let a = TraceReport(summary: decoded.summary()), b = TraceReport(summary: lines.summary())
        #expect(a.input.unknownTypes == 0 && b.input.unknownTypes == 0)
        #expect(a.renderJSON() == b.renderJSON())
        #expect(a.webSocket.connections == 67)
        #expect(a.webSocket.closes == 134)
        #expect(a.webSocket.failedAttempts == 67)
        // Closes ending a connection: i ≡ 1 (mod 6); codes 1000/1001 are the normal ones.
        let connectionEnds = (0..<400).filter { $0 % 6 == 1 }
        let normal = connectionEnds.filter { $0 % 5 < 2 }.count
        #expect(a.webSocket.abnormalCloses == 134 - normal)
        #expect(a.webSocket.messagesIn == Int64(connectionEnds.reduce(0, +)))
        #expect(a.webSocket.connectedMilliseconds == connectionEnds.reduce(Int64(0)) { $0 + Int64((Double($1) * 1000.25).rounded()) })
        #expect(a.webSocket.longestSilenceMilliseconds == Int64((Double(connectionEnds.max()!) * 7.5).rounded()))
    }

    @Test("summaries merge to the same report in any order")
    func mergeOrder() {
        let events = Self.events()
        var parts: [TraceSummary] = []
        for chunk in stride(from: 0, to: events.count, by: 50) {
            var aggregator = TraceAggregator()
            for e in events[chunk..<min(events.count, chunk + 50)] { aggregator.add(e) }
            parts.append(aggregator.summary())
        }
        var forward = TraceSummary(), backward = TraceSummary()
        for p in parts { forward.merge(p) }
        for p in parts.reversed() { backward.merge(p) }
        #expect(TraceReport(summary: forward).renderJSON() == TraceReport(summary: backward).renderJSON())
        #expect(TraceReport(summary: forward).renderText() == TraceReport(summary: backward).renderText())
    }
}
