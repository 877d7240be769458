import APITraceTestSupport
import Foundation
import Testing

/// One failed status (`RequestOutcome.failedStatuses`, 500 to 999) through the four readers of the
/// same traffic, by the real CLI: `report`, `export --format prometheus`, `alert` with a default
/// failure definition, and the rules of `apitrace rules --format prometheus` evaluated by
/// Prometheus' own engine (`promtool test rules`) over the export's own counters. A 6xx must fail
/// in all four, as a 5xx does.
@Suite("a 6xx fails in report, export, alert and the Prometheus rules alike")
struct FailedStatusAgreeTests {
    /// (status, count) of the folder's requests, ten minutes of them on one route.
    static let traffic: [(status: Int, count: Int)] = [(200, 100), (404, 30), (503, 10), (600, 30), (799, 20), (999, 10)]
    /// Failed, counted here from the statuses (Docs/trace-format.md: 500 and up).
    static var expectedFailures: Int { traffic.filter { $0.status >= 500 }.map(\.count).reduce(0, +) }
    static var expectedRequests: Int { traffic.map(\.count).reduce(0, +) }

    /// A burn-rate rule whose threshold (20%) lies between the 5xx share (5%) and the share of
    /// every failed status (35%): it pages only where a 6xx fails.
    static let rules = """
        rules:
          - name: six
            slo: 0.99
            min_requests: 1
            confidence: none
            burn_rate: [{long: 5m, short: 5m, factor: 20}]
            recent_window: 5m
            evidence_window: 1d
            notify: [hook]
        notifiers:
          hook: {type: webhook, url: "http://127.0.0.1:9/unused"}
        """

    static func writeFolder(_ dir: String) throws {
        var statuses = traffic.flatMap { Array(repeating: $0.status, count: $0.count) }
        var rng = UInt64(11)
        for i in statuses.indices.reversed() {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            statuses.swapAt(i, Int((rng >> 33) % UInt64(i + 1)))
        }
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"sixes","started":"2026-11-22T09:00:00.000Z"}"#]
        for (i, status) in statuses.enumerated() {
            // 200 requests over 10 minutes: one every 3 s.
            let ts = String(format: "2026-11-22T09:%02d:%02d.000Z", (i * 3) / 60, (i * 3) % 60)
            lines.append(#"{"type":"request","ts":"\#(ts)","method":"GET","route":"/apps/{id}","host":"api.example.com","status":\#(status),"duration_ms":12}"#)
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/20261122T090000Z-sixes-0001.jsonl"))
    }

    @Test("report, export and alert count every status from 500 up as a failure", .timeLimit(.minutes(5)))
    func readersCountSixes() async throws {
        let dir = TemporaryDirectory()
        try Self.writeFolder(dir.path)
        let apitrace = try builtProduct("apitrace").path

        let report = try JSONSerialization.jsonObject(with: try await runOffPool(apitrace, ["report", "--format", "json", dir.path]).stdout) as! [String: Any]
        let totals = report["totals"] as! [String: Any]
        #expect(totals["requests"] as? Int == Self.expectedRequests, "\(totals)")
        #expect(totals["errors"] as? Int == Self.expectedFailures, "\(totals)")
        #expect(totals["server_errors"] as? Int == Self.expectedFailures, "\(totals)")

        let prom = String(decoding: try await runOffPool(apitrace, ["export", "--format", "prometheus", dir.path]).stdout, as: UTF8.self)
        var serverErrors = 0.0
        for line in prom.split(separator: "\n") where line.hasPrefix("apitrace_http_client_requests_total{") && line.contains("outcome=\"server_error\"") {
            serverErrors += Double(line.split(separator: " ").last!)!
        }
        #expect(Int(serverErrors) == Self.expectedFailures, "\(prom)")

        try Self.rules.write(toFile: dir.file("rules.yaml"), atomically: true, encoding: .utf8)
        let alert = try await runOffPool(apitrace, [
            "alert", dir.path, "--rules", dir.file("rules.yaml"), "--state", dir.file("state.json"), "--dry-run", "--now", "2026-11-22T09:10:00Z",
        ])
        let alertText = String(decoding: alert.stdout, as: UTF8.self)
        let payloadLine = try #require(alertText.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("{") },
                                       "the rule did not page: \(alertText) \(String(decoding: alert.stderr, as: UTF8.self))")
        let payload = try JSONSerialization.jsonObject(with: Data(payloadLine.utf8)) as! [String: Any]
        let routes = (payload["evidence"] as! [String: Any])["top_failing_routes"] as! [[String: Any]]
        #expect(routes.map { ($0["failures"] as! NSNumber).intValue }.reduce(0, +) == Self.expectedFailures, "\(routes)")
        #expect(routes.map { ($0["requests"] as! NSNumber).intValue }.reduce(0, +) == Self.expectedRequests, "\(routes)")
    }

    @Test("the translated Prometheus rules page on the export's own counters of the same traffic",
          .requires(.promtool), .timeLimit(.minutes(5)))
    func prometheusRulesCountSixes() async throws {
        let dir = TemporaryDirectory()
        try Self.writeFolder(dir.path)
        let apitrace = try builtProduct("apitrace").path
        try Self.rules.write(toFile: dir.file("rules.yaml"), atomically: true, encoding: .utf8)
        let translated = try await runOffPool(apitrace, ["rules", "--format", "prometheus", "--rules", dir.file("rules.yaml"), "--output", dir.file("prom.yaml")])
        #expect(translated.status == 0, "\(String(decoding: translated.stderr, as: UTF8.self))")
        let yaml = try String(contentsOfFile: dir.file("prom.yaml"), encoding: .utf8)

        // Each request counter of the export becomes a series growing at its share of the traffic
        // for ten minutes (its final value, spread over 40 samples 15 s apart).
        let prom = String(decoding: try await runOffPool(apitrace, ["export", "--format", "prometheus", dir.path]).stdout, as: UTF8.self)
        var test = "rule_files: [prom.yaml]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:\n"
        var series = 0
        for line in prom.split(separator: "\n") where line.hasPrefix("apitrace_http_client_requests_total{") {
            let (selector, value) = (line[..<line.lastIndex(of: " ")!], Int(Double(line.split(separator: " ").last!)!))
            test += "      - series: '\(selector)'\n        values: '0+\(value)x60'\n"
            series += 1
        }
        #expect(series >= 6, "\(prom)")
        test += "    alert_rule_test:\n      - eval_time: 10m\n        alertname: six\n        exp_alerts:\n          - exp_labels: {\(try Self.alertLabels("six", in: yaml))}\n"
        test += "            exp_annotations: {summary: \(try Self.summary(of: "six", in: yaml))}\n"
        try test.write(toFile: dir.file("test.yaml"), atomically: true, encoding: .utf8)
        let promtool = try #require(OutsideTool.promtool.path)
        let result = try await runOffPool(promtool, ["test", "rules", dir.file("test.yaml")])
        #expect(result.status == 0, "promtool test rules:\n\(String(decoding: result.stdout + result.stderr, as: UTF8.self))\n--- test.yaml\n\(test)\n--- prom.yaml\n\(yaml)")
    }

    /// The labels the translation gives `alert` (its own and the recording rules' `apitrace_rule`).
    static func alertLabels(_ alert: String, in yaml: String) throws -> String {
        let lines = yaml.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: "      - alert: '\(alert)'"))
        let labelsAt = try #require(lines[start...].firstIndex(of: "        labels:"))
        var labels = ["apitrace_rule: '\(alert)'"]
        for line in lines[(labelsAt + 1)...] {
            guard line.hasPrefix("          ") else { break }
            labels.append(line.trimmingCharacters(in: .whitespaces))
        }
        return labels.joined(separator: ", ")
    }

    /// The summary annotation the translation wrote for `alert` (promtool compares annotations too).
    static func summary(of alert: String, in yaml: String) throws -> String {
        let lines = yaml.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: "      - alert: '\(alert)'"))
        let line = try #require(lines[start...].first { $0.contains("summary: '") })
        return String(line.drop { $0 != "'" })
    }
}
