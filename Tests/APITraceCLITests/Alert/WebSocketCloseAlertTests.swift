import APITraceFormat
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

/// A rule that pages on the share of WebSocket connections closing abnormally
/// (`failure: {websocket_closes: true}`), through the real binary and a real webhook receiver.
@Suite(.serialized) struct WebSocketCloseAlertTests {
    /// `perMinute` closes a minute on a live-comments route, a share of them abnormal (1006 or 1011).
    static func closes(from: Int64, to: Int64, perMinute: Double, abnormal: Double) -> [TraceEvent] {
        var events: [TraceEvent] = []
        var owed = 0.0, carry = 0.0
        for m in from..<to {
            carry += perMinute
            let n = Int(carry)
            carry -= Double(n)
            for i in 0..<n {
                let ts = TraceFixture.at(minutes: m).adding(milliseconds: Int64(i) * TraceFixture.minute / Int64(max(1, n)))
                owed += abnormal
                let bad = owed >= 1 - 1e-9
                if bad { owed -= 1 }
                let code = bad ? (i % 4 == 0 ? 1011 : 1006) : (i % 2 == 0 ? 1000 : 1001)
                events.append(TraceEvent(timestamp: ts, session: "s\(i % 9)", .websocket(.init(
                    phase: .close, route: "/news/{id}/comments", attempt: 1, code: code,
                    reason: TraceEvent.WebSocket.reasonClass(ofCode: code), closedBy: bad ? "network" : "server",
                    durationMs: 60_000, messagesIn: 12, messagesOut: 1, bytesIn: 2400, bytesOut: 40))))
                events.append(TraceEvent(timestamp: ts, .websocket(.init(phase: .open, route: "/news/{id}/comments", attempt: 1, durationMs: 30))))
            }
        }
        return events
    }

    static let rules = """
        rules:
          - name: live-comments
            scope: {route: "/news/*"}
            failure: {websocket_closes: true}
            slo: 0.99
            min_requests: 50
            confidence: 0.95
            notify: [hook]
        notifiers:
          hook: {type: webhook, webhook_url_env: HOOK_URL}
        """

    /// Runs `apitrace alert` at each minute (relative to the fixture's now) and returns the receiver's notifications.
    static func run(_ events: [TraceEvent], minutes: [Int64]) async throws -> [[String: Any]] {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        try TraceFixture.write(events.sorted { $0.timestamp < $1.timestamp }, to: dir.file("traces"))
        let bodies = try await Receiver.with { receiver in
            let rules = try TraceFixture.rules(Self.rules, in: dir)
            for minute in minutes {
                let run = try await apitrace(
                    ["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("s.json"), "--now", TraceFixture.at(minutes: minute).rfc3339],
                    environment: ["HOOK_URL": receiver.url("/hook")])
                #expect(run.status == 0, "\(run.stderr)")
            }
            return receiver.requests(to: "/hook").map(\.body)
        }
        return bodies.map { (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any] ?? [:] }
    }

    @Test("a burst of 1006 closes pages, naming the codes; it resolves once closes are clean again")
    func burstPages() async throws {
        // Six calm hours (1% abnormal), 20 minutes with half the connections dropped, then calm.
        let events = Self.closes(from: -360, to: -20, perMinute: 30, abnormal: 0.01)
            + Self.closes(from: -20, to: 0, perMinute: 30, abnormal: 0.5)
            + Self.closes(from: 0, to: 60, perMinute: 30, abnormal: 0.0)
            // Failing requests on the same routes must not count for a WebSocket rule.
            + TraceFixture.events([.init(from: -360, to: 60, perMinute: 2, failureRatio: 0, route: "/news/{id}/comments")])
        let hook = try await Self.run(events, minutes: [-30, 0, 30, 45])
        #expect(hook.map { $0["action"] as? String } == ["trigger", "resolve"], "\(hook)")
        let trigger = try #require(hook.first)
        #expect(trigger["rule"] as? String == "live-comments")
        let evidence = try JSONSerialization.data(withJSONObject: trigger["evidence"] ?? [:])
        #expect(String(decoding: evidence, as: UTF8.self).contains("WebSocket 1006 abnormal"), "\(String(decoding: evidence, as: UTF8.self))")
    }

    @Test("a trickle of abnormal closes at night does not page (min_requests counts closes), nor do failing requests")
    func trickleDoesNotPage() async throws {
        // At night: one close every five minutes, most of them dropped; requests all failing with 503.
        let events = Self.closes(from: -360, to: 0, perMinute: 0.2, abnormal: 0.7)
            + TraceFixture.events([.init(from: -360, to: 0, perMinute: 20, failureRatio: 1, route: "/news/{id}/comments")])
        let hook = try await Self.run(events, minutes: [-120, -60, 0])
        #expect(hook.isEmpty, "\(hook)")
    }
}
