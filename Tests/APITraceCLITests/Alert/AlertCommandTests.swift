import APITraceTestSupport
import APITraceServerTestSupport
import APITraceAlerting
import APITraceFormat
import Foundation
import Testing

/// `apitrace alert` run as a child process against a real receiver on 127.0.0.1, over real gzip traces.
/// Serialized: each test starts several processes, and a 2-core machine running them all at once
/// can stall a request past its 15 s timeout, which then (rightly) retries.
@Suite(.serialized) struct AlertCommandTests {
    static let secret = "R0UTINGKEY-abc123-secret"
    static let env = ["PD_ROUTING_KEY": secret]

    static func at(_ minutes: Int64) -> String { TraceFixture.at(minutes: minutes).rfc3339 }

    /// 6 h of calm traffic (0.5% failing), a 30-minute spike at 40% ending at `now`, then 40 calm minutes.
    static func spikeTraces(in dir: TemporaryDirectory) throws -> [TraceEvent] {
        let events = TraceFixture.events([
            .init(from: -360, to: -30, perMinute: 60, failureRatio: 0.005),
            .init(from: -30, to: 0, perMinute: 60, failureRatio: 0.4),
            .init(from: 0, to: 40, perMinute: 60, failureRatio: 0.005),
        ])
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        try TraceFixture.write(events, to: dir.file("traces"))
        return events
    }

    static func rules(_ receiver: Receiver, in dir: TemporaryDirectory, extra: String = "") throws -> String {
        try TraceFixture.rules("""
            rules:
              - name: api-errors
                slo: 0.99
                notify: [oncall]
            \(extra)
            notifiers:
              oncall:
                type: pagerduty
                routing_key_env: PD_ROUTING_KEY
                url: \(receiver.url("/v2/enqueue"))
                timeout: 60s  # the receiver runs in the test process: a loaded machine can slow its answer past the 15 s default
            """, in: dir)
    }

    static func alert(_ dir: TemporaryDirectory, _ rules: String, at minutes: Int64, _ more: [String] = []) async throws -> ProcessResult {
        try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"), "--now", at(minutes)] + more, environment: env)
    }

    @Test func pagesOnceWithAPagerDutyEventMatchingTheSchemaThenResolvesOnce() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let rules = try Self.rules(receiver, in: dir)
            var statuses: [Int32] = []
            for minute: Int64 in [0, 1, 2, 5, 10, 15, 20, 25, 30] {
                let run = try await Self.alert(dir, rules, at: minute)
                statuses.append(run.status)
                #expect(!run.stdout.contains(Self.secret) && !run.stderr.contains(Self.secret))
            }
            #expect(statuses.allSatisfy { $0 == 0 })
            let sent = receiver.requests(to: "/v2/enqueue")
            #expect(sent.map { $0.json["event_action"] as? String } == ["trigger", "resolve"])
            let trigger = sent[0].json, resolve = sent[1].json
            #expect(sent[0].contentType == "application/json")
            #expect(trigger["routing_key"] as? String == Self.secret)
            let key = try #require(trigger["dedup_key"] as? String)
            #expect(!key.isEmpty && key.count <= 255)
            let payload = try #require(trigger["payload"] as? [String: Any])
            let summary = try #require(payload["summary"] as? String)
            #expect(summary.count <= 1024 && summary.hasPrefix("api-errors: 40% of requests failing over 1m"))
            #expect((payload["source"] as? String)?.isEmpty == false)
            #expect(["critical", "error", "warning", "info"].contains(payload["severity"] as? String ?? ""))
            #expect(payload["severity"] as? String == "critical")
            #expect(TraceTimestamp(rfc3339: payload["timestamp"] as? String ?? "") == TraceFixture.now)
            let details = try #require(payload["custom_details"] as? [String: Any])
            #expect(details["failure_ratio"] as? Double == 0.4)
            #expect(details["threshold_ratio"] as? Double == 0.144)
            #expect(details["burn_rate"] as? Double == 40)
            // The headline is the fast pair's short window (1 m: 24 of 60 requests).
            #expect(details["window"] as? String == "1m")
            #expect(details["requests"] as? Double == 60 && details["failures"] as? Double == 24)
            let routes = try #require(details["top_failing_routes"] as? [[String: Any]])
            // Evidence window: the shortest long window, 5 m, all at 40%: 120 failures of 300 requests.
            #expect(routes.first?["route"] as? String == "/apps/{id}")
            #expect(routes.first?["failures"] as? Double == 120 && routes.first?["requests"] as? Double == 300)
            let identities = try #require(details["top_error_identities"] as? [[String: Any]])
            #expect(identities.first?["value"] as? String == "HTTP 503" && identities.first?["count"] as? Int == 120)
            #expect(details["report_command"] as? String == "apitrace report --since \(Self.at(-5)) \(dir.file("traces"))")
            // The resolve carries only what PagerDuty needs: key, action, the same dedup_key.
            #expect(Set(resolve.keys) == ["routing_key", "event_action", "dedup_key", "client"])
            #expect(resolve["dedup_key"] as? String == key)
        }
    }

    @Test func aFlapWithinResolveAfterIsOneIncidentAcrossRuns() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        // Spike, 8 calm minutes (under resolve_after 15m), spike again, then calm.
        try TraceFixture.write(TraceFixture.events([
            .init(from: -360, to: -30, perMinute: 60, failureRatio: 0.005),
            .init(from: -30, to: 0, perMinute: 60, failureRatio: 0.4),
            .init(from: 0, to: 8, perMinute: 60, failureRatio: 0.005),
            .init(from: 8, to: 20, perMinute: 60, failureRatio: 0.4),
            .init(from: 20, to: 60, perMinute: 60, failureRatio: 0.005),
        ]), to: dir.file("traces"))
        try await Receiver.with { receiver in
            let rules = try Self.rules(receiver, in: dir)
            var log = ""
            for minute in stride(from: Int64(0), through: 50, by: 2) {
                let run = try await Self.alert(dir, rules, at: minute, ["--verbose"])
                #expect(run.status == 0)
                log += run.stdout
            }
            // It stopped firing in between (recovering) and fired again, but stayed one incident.
            #expect(log.contains(" recovering: "))
            #expect(receiver.requests(to: "/v2/enqueue").map { $0.json["event_action"] as? String } == ["trigger", "resolve"])
            #expect(Set(receiver.requests(to: "/v2/enqueue").map { $0.json["dedup_key"] as? String }).count == 1)
            #expect(try StateStore(path: dir.file("state.json")).read().closed.count == 1)
        }
    }

    @Test func twoOverlappingRunsPageOnce() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let rules = try Self.rules(receiver, in: dir)
            async let a = Self.alert(dir, rules, at: 0)
            async let b = Self.alert(dir, rules, at: 0)
            let (ra, rb) = try await (a, b)
            #expect(ra.status == 0 && rb.status == 0)
            #expect(receiver.requests(to: "/v2/enqueue").count == 1)
            #expect([ra.stdout, rb.stdout].filter { $0.contains("TRIGGERED") }.count == 1)
        }
    }

    @Test func retriesOn429HonouringRetryAfterAnd500ThenDelivers() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.script("/v2/enqueue", [
                .init(status: 429, headers: ["Retry-After": "1"], body: #"{"status":"throttle event"}"#),
                .init(status: 500, body: "oops"),
            ])
            let run = try await Self.alert(dir, try Self.rules(receiver, in: dir), at: 0)
            #expect(run.status == 0)
            #expect(run.stdout.contains("delivered after 3 attempts"))
            let sent = receiver.requests(to: "/v2/enqueue")
            #expect(sent.count == 3)
            #expect(Set(sent.map(\.body)).count == 1)
        }
    }

    @Test func aFailedDeliveryIsKeptAndRetriedOnTheNextRun() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let rules = try Self.rules(receiver, in: dir)
            receiver.script("/v2/enqueue", Array(repeating: .init(status: 503, body: "down"), count: 3))
            let first = try await Self.alert(dir, rules, at: 0)
            #expect(first.status == 1)
            #expect(first.stderr.contains("kept for the next run") && !first.stderr.contains(Self.secret))
            let state = try StateStore(path: dir.file("state.json")).read()
            #expect(state.pending.count == 1 && state.pending[0].attempts == 3)
            let second = try await Self.alert(dir, rules, at: 1)
            #expect(second.status == 0)
            #expect(try StateStore(path: dir.file("state.json")).read().pending.isEmpty)
            let sent = receiver.requests(to: "/v2/enqueue")
            #expect(sent.count == 4)
            #expect(sent.allSatisfy { $0.json["event_action"] as? String == "trigger" })
        }
    }

    @Test func a4xxIsKeptAsAFailedDeliveryNotDropped() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            // 401: the key is wrong. Not retried within the run, but kept: fixing the key delivers it.
            receiver.script("/v2/enqueue", [.init(status: 401, body: #"{"status":"unauthorized"}"#)])
            let rules = try Self.rules(receiver, in: dir)
            let run = try await Self.alert(dir, rules, at: 0)
            #expect(run.status == 1)
            #expect(run.stderr.contains("HTTP 401") && run.stderr.contains("kept for the next run") && run.stderr.contains("check the notifier's key"))
            #expect(receiver.requests(to: "/v2/enqueue").count == 1)
            var state = try StateStore(path: dir.file("state.json")).read()
            #expect(state.pending.count == 1 && state.pending[0].attempts == 1 && state.pending[0].claimedUntil == nil)
            #expect(state.incidents["api-errors"]?.pages == 0 && state.incidents["api-errors"]?.lastPaged == nil)
            let next = try await Self.alert(dir, rules, at: 1)
            #expect(next.status == 0, "\(next.stderr)")
            state = try StateStore(path: dir.file("state.json")).read()
            #expect(state.pending.isEmpty && state.incidents["api-errors"]?.pages == 1)
            #expect(receiver.requests(to: "/v2/enqueue").map { $0.json["event_action"] as? String } == ["trigger", "trigger"])
        }
    }

    @Test func aLowTrafficBlipDoesNotPage() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        try TraceFixture.write(TraceFixture.events([.init(from: -4, to: 0, perMinute: 1, failureRatio: 0.75)]), to: dir.file("traces"))
        try await Receiver.with { receiver in
            let run = try await Self.alert(dir, try Self.rules(receiver, in: dir), at: 0, ["--verbose"])
            #expect(run.status == 0)
            #expect(run.stdout.contains("held back: 4 requests, fewer than min_requests 20"))
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test func mutedIncidentsAreRecordedNotPagedAndUnmutingPages() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let rules = try Self.rules(receiver, in: dir)
            let state = dir.file("state.json")
            let mute = try await apitrace(["mute", "--for", "2h", "--rule", "api-errors", "--comment", "deploy 2.2", "--rules", rules, "--state", state, "--now", Self.at(-1)])
            #expect(mute.status == 0 && mute.stdout.hasPrefix("muted "))
            let list = try await apitrace(["mute", "--list", "--state", state, "--now", Self.at(0)])
            #expect(list.stdout.contains("api-errors") && list.stdout.contains("\"deploy 2.2\"") && list.stdout.contains("until \(Self.at(119))"))
            let muted = try await Self.alert(dir, rules, at: 0)
            #expect(muted.status == 0 && muted.stdout.contains("MUTED"))
            #expect(receiver.requests.isEmpty)
            #expect(try StateStore(path: state).read().incidents["api-errors"]?.mutedEvaluations == 1)
            let unmute = try await apitrace(["unmute", "--rule", "api-errors", "--state", state, "--now", Self.at(1)])
            #expect(unmute.stdout.hasPrefix("unmuted "))
            let paged = try await Self.alert(dir, rules, at: 1)
            #expect(paged.stdout.contains("TRIGGERED"))
            #expect(receiver.requests(to: "/v2/enqueue").count == 1)
        }
    }

    @Test func dryRunPrintsTheRedactedPayloadAndChangesNothing() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let run = try await Self.alert(dir, try Self.rules(receiver, in: dir), at: 0, ["--dry-run"])
            #expect(run.status == 0)
            #expect(run.stdout.contains("would send to oncall") && run.stdout.contains("<redacted: $PD_ROUTING_KEY>"))
            #expect(!run.stdout.contains(Self.secret))
            #expect(receiver.requests.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: dir.file("state.json")))
        }
    }

    @Test func backtestPrintsWhenTheRulesWouldHavePaged() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        let rules = try TraceFixture.rules("rules:\n  - name: api-errors\n    slo: 0.99\n", in: dir)
        let run = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--backtest", "--since", Self.at(-60), "--until", Self.at(40)])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let pages = lines.filter { $0.contains(" PAGE ") }, resolves = lines.filter { $0.contains(" RESOLVE ") }
        #expect(pages.count == 1 && resolves.count == 1)
        // The spike (40% from 30 minutes before now) pages through the fast 5m/1m pair within 5 minutes
        // of its start, and resolves within 15 minutes of its end (the recent 3 m window is calm at +2,
        // resolve_after is 10 m).
        let page = try #require(pages.first.flatMap { TraceTimestamp(rfc3339: String($0.prefix(24))) })
        let resolve = try #require(resolves.first.flatMap { TraceTimestamp(rfc3339: String($0.prefix(24))) })
        let start = try #require(TraceTimestamp(rfc3339: Self.at(-30))), end = try #require(TraceTimestamp(rfc3339: Self.at(0)))
        #expect(page >= start && page.millisecondsSince1970 - start.millisecondsSince1970 <= 5 * 60_000, "\(run.stdout)")
        #expect(resolve > end && resolve.millisecondsSince1970 - end.millisecondsSince1970 <= 15 * 60_000, "\(run.stdout)")
        #expect(lines.last?.hasPrefix("api-errors: 1 incident, 1 page") == true)
    }

    @Test func checkConfigGivesLinePreciseErrorsAndExitStatus2() async throws {
        let dir = TemporaryDirectory()
        let bad = try TraceFixture.rules("rules:\n  - name: api-errors\n    slo: 0.99\n    notify: [oncall]\n    repeat_interval: often\n", in: dir)
        let run = try await apitrace(["alert", "--check-config", "--rules", bad])
        #expect(run.status == 2)
        #expect(run.stderr.contains("\(bad):5:22: rules[0].repeat_interval: expected a duration"))
    }
}
