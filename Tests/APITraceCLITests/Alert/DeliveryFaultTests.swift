@testable import APITraceAlerting
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceFormat
import Foundation
import Testing

/// Deliveries that nothing can silence or crash: each fault a receiver or a command can cause,
/// through the built `apitrace` binary against a real receiver on 127.0.0.1 or a real child process.
@Suite(.serialized) struct DeliveryFaultTests {
    static let secret = AlertCommandTests.secret

    func alert(_ dir: TemporaryDirectory, _ rules: String, at minutes: Int64, _ more: [String] = [], environment: [String: String] = [:]) async throws -> ProcessResult {
        try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"), "--now", AlertCommandTests.at(minutes)] + more,
                           environment: AlertCommandTests.env.merging(environment) { $1 })
    }

    func state(_ dir: TemporaryDirectory) throws -> AlertState { try StateStore(path: dir.file("state.json")).read() }

    @Test(arguments: ["inf", "1e300", "-1", "nan", "soon"])
    func anUnreadableRetryAfterIsIgnoredNotATrap(_ header: String) async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.script("/v2/enqueue", Array(repeating: .init(status: 503, headers: ["Retry-After": header], body: "busy"), count: 3))
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await alert(dir, rules, at: 0)
            // Before: `inf` trapped inside the lock (exit 132/133) on every later run.
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("ignored an unreadable Retry-After") && run.stderr.contains("kept for the next run"))
            #expect(receiver.requests(to: "/v2/enqueue").count == 3)  // the normal backoff, 0.5 s then 1 s
            #expect(try state(dir).pending.count == 1)
            let next = try await alert(dir, rules, at: 1)
            #expect(next.status == 0, "\(next.stderr)")
            #expect(try state(dir).pending.isEmpty && state(dir).incidents["api-errors"]?.pages == 1)
        }
    }

    @Test func aRetryAfterBeyondTheRunsPatienceLeavesTheDeliveryForTheNextRun() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.script("/v2/enqueue", [.init(status: 429, headers: ["Retry-After": "99999999999999999999"], body: "slow down")])
            let run = try await alert(dir, try AlertCommandTests.rules(receiver, in: dir), at: 0)
            #expect(run.status == 1)
            #expect(run.stderr.contains("is longer than this run waits"))
            #expect(receiver.requests(to: "/v2/enqueue").count == 1)
            #expect(try state(dir).pending.count == 1)
        }
    }

    /// Six hours of calm, then 30 minutes in which five routes with very long names fail (a client
    /// that puts ids or whole payloads into its route templates).
    static func longRouteTraces(in dir: TemporaryDirectory) throws {
        var traffic: [TraceFixture.Traffic] = [.init(from: -360, to: -30, perMinute: 60, failureRatio: 0.005)]
        for k in 0..<5 {
            traffic.append(.init(from: -30, to: 0, perMinute: 12, failureRatio: 0.5,
                                 route: "/apps/\(k)/" + String(repeating: "<!channel>&x", count: 400)))
        }
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        try TraceFixture.write(TraceFixture.events(traffic), to: dir.file("traces"))
    }

    @Test(arguments: [400, 413])
    func aBodyRefusedAsTooLargeIsSentOnceMoreWithTrimmedEvidence(_ status: Int) async throws {
        let dir = TemporaryDirectory()
        try Self.longRouteTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.refuseBodies(to: "/v2/enqueue", largerThan: 3000, with: .init(status: status, body: #"{"status":"invalid event","message":"too large"}"#))
            let run = try await alert(dir, try AlertCommandTests.rules(receiver, in: dir), at: 0)
            #expect(run.status == 0, "\(run.stderr)")
            let sent = receiver.requests(to: "/v2/enqueue")
            #expect(sent.count == 2)
            #expect(sent[0].body.count > 3000 && sent[1].body.count <= 3000)
            let details = try #require((sent[1].json["payload"] as? [String: Any])?["custom_details"] as? [String: Any])
            let routes = try #require(details["top_failing_routes"] as? [[String: Any]])
            #expect(routes.count == 3)
            #expect(routes.allSatisfy { ($0["route"] as? String).map { $0.count == 120 && $0.hasSuffix("…") } == true })
            // Within PagerDuty's limits in the first place: each string at most 512 characters, summary 1024.
            let first = try #require((sent[0].json["payload"] as? [String: Any]))
            #expect(((first["summary"] as? String)?.count ?? 0) <= 1024)
            let firstRoutes = try #require((first["custom_details"] as? [String: Any])?["top_failing_routes"] as? [[String: Any]])
            #expect(firstRoutes.count == 5 && firstRoutes.allSatisfy { (($0["route"] as? String)?.count ?? 0) <= 512 })
            #expect(try state(dir).incidents["api-errors"]?.pages == 1)
        }
    }

    @Test func aBodyRefusedEvenTrimmedIsKeptAndRetriedNotDropped() async throws {
        let dir = TemporaryDirectory()
        try Self.longRouteTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.refuseBodies(to: "/v2/enqueue", largerThan: 100, with: .init(status: 400, body: #"{"status":"invalid event"}"#))
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            let run = try await alert(dir, rules, at: 0)
            #expect(run.status == 1)
            #expect(run.stderr.contains("HTTP 400") && run.stderr.contains("the trimmed body was refused too") && run.stderr.contains("kept for the next run"))
            #expect(receiver.requests(to: "/v2/enqueue").count == 2)
            var s = try state(dir)
            #expect(s.pending.count == 1 && s.incidents["api-errors"]?.pages == 0 && s.incidents["api-errors"]?.triggers == 1)
            // The next run tries again (the service may have been fixed); still refused, still kept.
            let next = try await alert(dir, rules, at: 1)
            #expect(next.status == 1 && next.stdout.contains("RETRY trigger"))
            s = try state(dir)
            #expect(s.pending.count == 1 && s.pending[0].attempts == 2)
        }
    }

    @Test func aResolveNeverOvertakesItsUndeliveredTrigger() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            // Triggers (with evidence, large) fail; resolves (small) would pass: sent alone, a resolve
            // would reach PagerDuty before its trigger and the late trigger would open a page nobody resolves.
            receiver.refuseBodies(to: "/v2/enqueue", largerThan: 400, with: .init(status: 503, body: "down"))
            let rules = try TraceFixture.rules("""
                rules:
                  - {name: api-errors, slo: 0.99, notify: [oncall]}
                notifiers:
                  oncall: {type: pagerduty, routing_key_env: PD_ROUTING_KEY, url: "\(receiver.url("/v2/enqueue"))", max_attempts: 1}
                """, in: dir)
            var resolvedAt: Int64?
            for minute: Int64 in [0, 5, 10, 15, 20, 25, 30] {
                let run = try await alert(dir, rules, at: minute)
                #expect(run.status == 1)
                if run.stdout.contains("RESOLVED") { resolvedAt = minute }
            }
            #expect(resolvedAt != nil)
            #expect(receiver.requests(to: "/v2/enqueue").allSatisfy { $0.json["event_action"] as? String == "trigger" })
            var s = try state(dir)
            #expect(s.pending.map(\.notification.action) == [.trigger, .resolve])
            // The service recovers: the next run sends the trigger, then the resolve.
            receiver.refuseBodies(to: "/v2/enqueue", largerThan: Int.max, with: .init(status: 503, body: "down"))
            let before = receiver.requests(to: "/v2/enqueue").count
            let run = try await alert(dir, rules, at: 31)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(receiver.requests(to: "/v2/enqueue").dropFirst(before).map { $0.json["event_action"] as? String } == ["trigger", "resolve"])
            s = try state(dir)
            #expect(s.pending.isEmpty && s.closed.last?.pages == 1)
        }
    }

    @Test func aReceiverThatNeverAnswersIsBoundedByTheNotifiersTimeout() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.script("/v2/enqueue", [.init(status: 202, body: "{}", delay: .seconds(60))])
            let rules = try TraceFixture.rules("""
                rules:
                  - {name: api-errors, slo: 0.99, notify: [oncall]}
                notifiers:
                  oncall: {type: pagerduty, routing_key_env: PD_ROUTING_KEY, url: "\(receiver.url("/v2/enqueue"))", max_attempts: 1, timeout: 2s}
                """, in: dir)
            let run = try await alert(dir, rules, at: 0)
            #expect(run.status == 1)
            #expect(run.stderr.contains("no complete answer from http://127.0.0.1:\(receiver.port)/v2/enqueue within 2.0 seconds") && run.stderr.contains("kept for the next run"), "\(run.stderr)")
            #expect(try state(dir).pending.count == 1)
        }
    }

    @Test func aDeliveryClaimedByARunThatDiedIsTakenOverWhenTheClaimExpires() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let rules = try AlertCommandTests.rules(receiver, in: dir)
            #expect(try await alert(dir, rules, at: 0).status == 0)
            // Make it look as if a run had claimed a repeat and then been killed mid-delivery.
            let store = StateStore(path: dir.file("state.json"))
            var s = try store.read()
            let incident = try #require(s.incidents["api-errors"])
            let repeatPage = AlertNotification(action: .trigger, rule: "api-errors", incidentID: incident.id, severity: .critical,
                                               summary: "api-errors: still failing", timestamp: TraceFixture.at(minutes: 1), isRepeat: true)
            let wall = Int64(Date().timeIntervalSince1970 * 1000)
            s.pending = [PendingDelivery(id: "claimed-by-a-live-run", notifier: "oncall", notification: repeatPage, attempts: 0, lastError: "", claimedUntil: wall + 3_600_000)]
            try store.write(s)
            let busy = try await alert(dir, rules, at: 2)
            #expect(busy.status == 0 && !busy.stdout.contains("delivered"))
            #expect(receiver.requests(to: "/v2/enqueue").count == 1)  // a live claim is left alone
            s = try store.read()
            s.pending[0].claimedUntil = wall - 1
            try store.write(s)
            let takeover = try await alert(dir, rules, at: 3)
            #expect(takeover.status == 0 && takeover.stdout.contains("-> oncall (pagerduty): delivered"), "\(takeover.stderr)")
            let sent = receiver.requests(to: "/v2/enqueue")
            #expect(sent.count == 2 && (sent[1].json["payload"] as? [String: Any])?["summary"] as? String == "api-errors: still failing")
            #expect(try store.read().pending.isEmpty)
        }
    }

    @Test func slackTextFromTracesIsEscapedSoItCannotPingOrLink() async throws {
        let dir = TemporaryDirectory()
        var traffic: [TraceFixture.Traffic] = [.init(from: -360, to: -30, perMinute: 60, failureRatio: 0.005)]
        traffic.append(.init(from: -30, to: 0, perMinute: 60, failureRatio: 0.5, route: "/x/<!channel>/<https://evil.example|runbook>&co"))
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        try TraceFixture.write(TraceFixture.events(traffic), to: dir.file("traces"))
        try await Receiver.with { receiver in
            let rules = try TraceFixture.rules("""
                rules:
                  - {name: api, slo: 0.99, notify: [chat]}
                notifiers:
                  chat: {type: slack, webhook_url_env: SLACK_URL}
                """, in: dir)
            let run = try await alert(dir, rules, at: 0, environment: ["SLACK_URL": receiver.url("/slack/T0/B0/secret")])
            #expect(run.status == 0, "\(run.stderr)")
            let message = try #require(receiver.requests(to: "/slack/T0/B0/secret").first)
            let text = String(decoding: message.body, as: UTF8.self)
            #expect(!text.contains("<!channel>") && !text.contains("<https://evil"))
            let section = try #require(((message.json["blocks"] as? [[String: Any]])?[0]["text"] as? [String: Any])?["text"] as? String)
            #expect(section.contains("`/x/&lt;!channel&gt;/&lt;https://evil.example|runbook&gt;&amp;co`"))
            #expect(section.count <= SlackMessage.blockTextLimit)
        }
    }
}
