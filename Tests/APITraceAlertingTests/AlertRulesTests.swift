import APITraceAlerting
import Foundation
import Testing

@Suite struct AlertRulesTests {
    static let minimal = """
        rules:
          - name: api-errors
            slo: 0.99            # multi-window burn-rate paging with the default windows
            notify: [oncall]
        notifiers:
          oncall:
            type: pagerduty
            routing_key_env: PD_ROUTING_KEY
            url: https://events.pagerduty.com/v2/enqueue   # overridable, e.g. to a receiver on 127.0.0.1
        """

    @Test func theIssuesMinimalFileMeansWhatItSays() throws {
        let rules = try AlertRules.parse(Self.minimal, file: "rules.yaml")
        #expect(rules.rules.count == 1)
        let rule = try #require(rules.rules.first)
        #expect(rule.name == "api-errors")
        #expect(rule.slo == 0.99)
        #expect(rule.notify == ["oncall"])
        #expect(rule.scope.isAll)
        #expect(rule.failure == .init(statuses: [500...999], transport: true, decodeFailures: false))
        #expect(rule.burnRateWindows == [
            .init(long: .minutes(5), short: .minutes(1), factor: 14.4),
            .init(long: .hours(1), short: .minutes(5), factor: 14.4),
            .init(long: .hours(6), short: .minutes(30), factor: 6),
        ])
        #expect(rule.recentWindow == .minutes(3))
        #expect(rule.resolveAfter == .minutes(10))
        #expect(rule.spike == nil)
        let oncall = try #require(rules.notifiers["oncall"])
        #expect(oncall.kind == .pagerduty)
        #expect(oncall.routingKeyEnvironmentVariable == "PD_ROUTING_KEY")
        #expect(oncall.url == "https://events.pagerduty.com/v2/enqueue")
    }

    @Test func jsonIsAcceptedToo() throws {
        let json = #"{"rules": [{"name": "a", "spike": {"window": "15m", "baseline": "same_hour_of_week", "factor": 4}, "scope": {"route": "/apps/*", "app_version": "2.1"}, "notify": ["hook"]}], "notifiers": {"hook": {"type": "webhook", "webhook_url_env": "HOOK_URL"}}}"#
        let rules = try AlertRules.parse(json)
        let rule = try #require(rules.rules.first)
        #expect(rule.spike == .init(window: .minutes(15), baseline: .sameHourOfWeek, factor: 4, minIncrease: 0.02))
        #expect(rule.scope == .init(route: "/apps/*", appVersion: "2.1"))
        #expect(rules.notifiers["hook"]?.urlEnvironmentVariable == "HOOK_URL")
    }

    @Test func everyFieldParses() throws {
        let text = """
            rules:
              - name: apps-route
                scope: {route: "/apps/{id}", host: api.example.com}
                failure: {statuses: [5xx, 429, 408-409], transport: false, decode_failures: true}
                slo: 0.995
                burn_rate:
                  - {long: 2h, short: 10m, factor: 10}
                min_requests: 100
                confidence: none
                severity: warning
                repeat_interval: 1h30m
                resolve_after: 20m
                evidence_window: 45m
                notify: [chat, run]
            notifiers:
              chat: {type: slack, webhook_url_env: SLACK_URL, send_resolved: false, max_attempts: 5}
              run: {type: command, command: "cat > /dev/null"}
            """
        let rule = try #require(try AlertRules.parse(text).rules.first)
        #expect(rule.failure.statuses == [500...599, 429...429, 408...409])
        #expect(rule.failure.isFailure(status: 429) && rule.failure.isFailure(status: 408) && !rule.failure.isFailure(status: 404))
        #expect(!rule.failure.isFailure(status: nil))
        #expect(rule.burnRateWindows == [.init(long: .hours(2), short: .minutes(10), factor: 10)])
        #expect(rule.minRequests == 100 && rule.confidence == nil && rule.severity == .warning)
        #expect(rule.repeatInterval == .init(milliseconds: 5_400_000) && rule.resolveAfter == .minutes(20) && rule.evidenceWindow == .minutes(45))
    }

    @Test(arguments: [
        ("rules:\n  - name: x\n    slo: 99\n", 3, "rules[0].slo", "between 0 and 1"),
        ("rules:\n  - name: x\n    slo: 0.99\n    sol: 1\n", 4, "rules[0].sol", "unknown field"),
        ("rules:\n  - name: x\n", 2, "rules[0]", "detects nothing"),
        ("rules:\n  - name: x\n    slo: 0.99\n    notify: [pager]\n", 2, "rules[0]", "not under `notifiers:`"),
        ("rules:\n  - name: x\n    spike: {window: soon}\n", 3, "rules[0].spike.window", "expected a duration"),
        ("rules:\n  - name: x\n    slo: 0.99\nnotifiers:\n  p:\n    type: pagerduty\n", 6, "notifiers.p", "routing_key_env"),
        ("rules:\n  - name: x\n    slo: [0.99\n", 4, nil, "invalid YAML"),
        ("rules:\n  - name: x\n    slo: 0.99\n  - name: x\n    slo: 0.9\n", 4, "rules[1]", "already defined"),
    ] as [(String, Int, String?, String)])
    func errorsNameTheLineAndField(text: String, line: Int, field: String?, message: String) {
        #expect {
            _ = try AlertRules.parse(text, file: "r.yaml")
        } throws: { error in
            guard let error = error as? AlertConfigError else { return false }
            return error.file == "r.yaml" && error.line == line && error.field == field && error.message.contains(message)
        }
    }

    @Test func durationsParseAndPrint() {
        #expect(AlertDuration(parsing: "1h30m") == .init(milliseconds: 5_400_000))
        #expect(AlertDuration(parsing: "90") == .seconds(90))
        #expect(AlertDuration(parsing: "2d")?.description == "2d")
        #expect(AlertDuration.minutes(90).description == "1h30m")
        #expect(AlertDuration(parsing: "5x") == nil && AlertDuration(parsing: "m") == nil && AlertDuration(parsing: "") == nil)
    }

    @Test func theSampleRulesFileIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let rules = try AlertRules.load(path: root.appendingPathComponent("Samples/alert-rules.yaml").path)
        #expect(rules.rules.map(\.name) == ["api-errors", "apps-decoding", "news-spike", "live-comments"])
        #expect(rules.notifiers.count == 4)
    }
}
