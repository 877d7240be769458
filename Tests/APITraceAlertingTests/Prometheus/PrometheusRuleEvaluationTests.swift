import APITraceAlerting
import APITraceTestSupport
import Foundation
import Testing

/// The translated rules evaluated by Prometheus' own engine (`promtool test rules`) over series
/// shaped like the exporter's, minute by minute: they must page when `apitrace alert` would and stay
/// quiet when it would.
@Suite("Prometheus rules evaluation")
struct PrometheusRuleEvaluationTests {
    static let rules = """
        rules:
          - name: api-errors
            slo: 0.99
          - name: apps-route
            scope: {route: "/apps/{id}"}
            slo: 0.99
          - name: slow-search
            scope: {route: "/search"}
            slo: 0.95
            latency_ms: 1000
        """

    static let requests = "apitrace_http_client_requests_total"

    /// A request series of the exporter's shape; `values` in promtool's expanding notation, one sample per 15 s.
    static func series(route: String, status: String?, outcome: String, error: String = "", values: String) -> String {
        let labels = [
            "http_request_method=\"GET\"", "url_template=\"\(route)\"", "server_address=\"api.example.com\"", "app_version=\"2.1.0\"",
            status.map { "http_response_status_code=\"\($0)\"" }, "error_type=\"\(error.isEmpty ? status ?? "" : error)\"", "outcome=\"\(outcome)\"",
        ].compactMap { $0 }.filter { !$0.hasSuffix("=\"\"") }
        return "      - series: '\(requests){\(labels.joined(separator: ","))}'\n        values: '\(values)'\n"
    }

    /// The summary annotation the translation wrote for `alert` (promtool compares annotations too).
    static func summary(of alert: String, in yaml: String) throws -> String {
        let lines = yaml.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: "      - alert: '\(alert)'"))
        let line = try #require(lines[start...].first { $0.contains("summary: '") })
        return String(line.drop { $0 != "'" })
    }

    static func expectation(_ alert: String, at time: String, firing: Bool, yaml: String, scope: String = "all") throws -> String {
        var text = "      - eval_time: \(time)\n        alertname: \(alert)\n        exp_alerts:"
        if firing {
            text += "\n          - exp_labels: {severity: critical, apitrace_rule: \(alert), rule: \(alert), scope: '\(scope)'}\n            exp_annotations: {summary: \(try summary(of: alert, in: yaml))}\n"
        } else {
            text += " []\n"
        }
        return text
    }

    @Test("a 40% 5xx spike pages within minutes, resolves resolve_after after recovery; a 0.4% rate never pages",
          .requires(.promtool))
    func spikeFiresAndResolves() async throws {
        let yaml = PrometheusRuleTranslation(try AlertRules.parse(Self.rules)).yaml
        // 1000 successes a minute on /apps/{id}; 5xx at 4 a minute, then 600 a minute (37.5%) from minute 60 to 80.
        var test = "    input_series:\n"
        test += Self.series(route: "/apps/{id}", status: "200", outcome: "success", values: "0+250x480")
        test += Self.series(route: "/apps/{id}", status: "503", outcome: "server_error", values: "0+1x239 240+150x80 12241+1x160")
        test += "    alert_rule_test:\n"
        for (time, firing) in [("55m", false), ("59m", false), ("64m", true), ("79m", true), ("88m", true), ("96m", false), ("110m", false)] {
            test += try Self.expectation("api-errors", at: time, firing: firing, yaml: yaml)
            test += try Self.expectation("apps-route", at: time, firing: firing, yaml: yaml, scope: "route=/apps/{id}")
        }
        try await expectPromtoolPasses(rules: yaml, test: test)
    }

    @Test("cancelled requests are neither failures nor requests; a scoped rule ignores other routes",
          .requires(.promtool))
    func outcomeClassesAndScope() async throws {
        let yaml = PrometheusRuleTranslation(try AlertRules.parse(Self.rules)).yaml
        // /news: 480 successes, 160 5xx and 5000 cancellations a minute; with /apps/{id}'s 40 healthy
        // requests, 160 / 680 = 23.5% > 14.4% (counting the cancellations would make it 2.8%).
        var test = "    input_series:\n"
        test += Self.series(route: "/news", status: "200", outcome: "success", values: "0+120x80")
        test += Self.series(route: "/news", status: "500", outcome: "server_error", values: "0+40x80")
        test += Self.series(route: "/news", status: nil, outcome: "cancelled", error: "URLError.cancelled", values: "0+1250x80")
        test += Self.series(route: "/apps/{id}", status: "200", outcome: "success", values: "0+10x80")
        test += "    alert_rule_test:\n"
        test += try Self.expectation("api-errors", at: "10m", firing: true, yaml: yaml)
        test += try Self.expectation("apps-route", at: "10m", firing: false, yaml: yaml, scope: "route=/apps/{id}")
        // Healthy traffic under a storm of cancellations and offline requests: nothing fails (counting
        // them as transport failures would make 92% fail).
        test += "  - interval: 15s\n    input_series:\n"
        test += Self.series(route: "/news", status: "200", outcome: "success", values: "0+120x80")
        test += Self.series(route: "/news", status: nil, outcome: "cancelled", error: "URLError.cancelled", values: "0+1250x80")
        test += Self.series(route: "/news", status: nil, outcome: "offline", error: "URLError.notConnectedToInternet", values: "0+250x80")
        test += "    alert_rule_test:\n"
        test += try Self.expectation("api-errors", at: "10m", firing: false, yaml: yaml)
        try await expectPromtoolPasses(rules: yaml, test: test)
    }

    @Test("a latency rule pages on the share of requests slower than latency_ms, from the histogram",
          .requires(.promtool))
    func latency() async throws {
        let yaml = PrometheusRuleTranslation(try AlertRules.parse(Self.rules)).yaml
        func histogram(_ suffix: String, le: String?, values: String) -> String {
            let labels = ["url_template=\"/search\"", "app_version=\"2.1.0\""] + (le.map { ["le=\"\($0)\""] } ?? [])
            return "      - series: 'http_client_request_duration_seconds_\(suffix){\(labels.joined(separator: ","))}'\n        values: '\(values)'\n"
        }
        // 400 requests a minute; 5% slower than 1 s for 30 minutes (within the 95% objective), then 50%.
        var test = "    input_series:\n"
        test += histogram("bucket", le: "1.0", values: "0+95x119 11400+50x40")
        test += histogram("count", le: nil, values: "0+100x160")
        test += "    alert_rule_test:\n"
        test += try Self.expectation("slow-search", at: "29m", firing: false, yaml: yaml, scope: "route=/search")
        test += try Self.expectation("slow-search", at: "36m", firing: true, yaml: yaml, scope: "route=/search")
        try await expectPromtoolPasses(rules: yaml, test: test)
    }

    @Test("group_by: [route] pages for a route with 2% of the traffic failing completely, one alert for that route; the ungrouped rule stays quiet",
          .requires(.promtool))
    func groupedRulePagesTheRoute() async throws {
        let rules = "rules:\n  - name: api-errors\n    slo: 0.99\n  - name: api-routes\n    slo: 0.99\n    group_by: [route]\n"
        let yaml = PrometheusRuleTranslation(try AlertRules.parse(rules)).yaml
        let dir = TemporaryDirectory()
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: dir.file("r.yaml")))
        let check = try await Promtool.run(["check", "rules", dir.file("r.yaml")])
        #expect(check.status == 0, "\(check.output)")
        // /feed: 1960 successes a minute; /news: 40 a minute (2%), all of them failing from minute 60 on.
        var test = "    input_series:\n"
        test += Self.series(route: "/feed", status: "200", outcome: "success", values: "0+490x480")
        test += Self.series(route: "/news", status: "200", outcome: "success", values: "0+10x240 2400x240")
        test += Self.series(route: "/news", status: "503", outcome: "server_error", values: "0x239 0+10x240")
        test += "    alert_rule_test:\n"
        let summary = try Self.summary(of: "api-routes", in: yaml).replacingOccurrences(of: "{{ $labels.url_template }}", with: "/news")
        #expect(summary.hasPrefix("'/news (api-routes: failed requests)"))
        for (time, firing) in [("58m", false), ("66m", true), ("90m", true)] {
            test += "      - eval_time: \(time)\n        alertname: api-routes\n        exp_alerts:"
            test += firing
                ? "\n          - exp_labels: {severity: critical, apitrace_rule: api-routes, rule: api-routes, scope: all, url_template: /news}\n            exp_annotations: {summary: \(summary)}\n"
                : " []\n"
            test += try Self.expectation("api-errors", at: time, firing: false, yaml: yaml)
        }
        try await expectPromtoolPasses(rules: yaml, test: test)
    }

    func expectPromtoolPasses(rules: String, test: String) async throws {
        let dir = TemporaryDirectory()
        try Data(rules.utf8).write(to: URL(fileURLWithPath: dir.file("rules.yaml")))
        let file = "rule_files: [rules.yaml]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n" + test
        try Data(file.utf8).write(to: URL(fileURLWithPath: dir.file("test.yaml")))
        let result = try await Promtool.run(["test", "rules", dir.file("test.yaml")])
        #expect(result.status == 0, "promtool test rules failed:\n\(result.output)\n--- test.yaml\n\(file)")
    }
}
