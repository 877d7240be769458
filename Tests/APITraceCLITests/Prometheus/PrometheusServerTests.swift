import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Hummingbird
import NIOCore
import Testing

/// The generated rules and the export's metrics in a real Prometheus: it loads every rule group
/// and evaluates them without error, and it scrapes the OpenMetrics text of `apitrace export`
/// from a real HTTP server with the per-route counts the trace files hold.
@Suite(.serialized) struct PrometheusServerTests {
    @Test(.requires(.prometheus))
    func loadsTheRulesAndScrapesTheExport() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        // 30 requests on /apps/{id} (3 of them 503) and 20 on /news, from app version 2.1.0.
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"test","app_version":"2.1.0","started":"2026-11-22T09:00:00.000Z"}"#]
        for i in 0..<50 {
            let route = i < 30 ? "/apps/{id}" : "/news"
            let status = i < 30 && i % 10 == 0 ? 503 : 200
            lines.append(#"{"type":"request","ts":"2026-11-22T09:00:\#(String(format: "%02d", i)).000Z","method":"GET","route":"\#(route)","host":"api.example.com","status":\#(status),"duration_ms":\#(i * 13)}"#)
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir.file("traces/20261122T090000Z-test-0001.jsonl")))
        let export = try await apitrace(["export", "--format", "prometheus", "--state", dir.file("export-state.json"), dir.file("traces")])
        try #require(export.status == 0, "\(export.stderr)")
        let rules = try await apitrace(["rules", "--format", "prometheus", "--rules", AlertRuleFixtures.samplesPath, "--output", dir.file("rules.yaml")])
        try #require(rules.status == 0, "\(rules.stderr)")

        let metrics = export.stdout
        try await TestServer.serve({ router in
            router.get("/metrics") { _, _ in
                Response(status: .ok, headers: [.contentType: "application/openmetrics-text; version=1.0.0; charset=utf-8"],
                         body: .init(byteBuffer: ByteBuffer(string: metrics)))
            }
        }) { base in
            let port = try #require(base.port)
            let prometheus = try await RunningPrometheus.start(binary: try #require(OutsideTool.prometheus.path), ruleFiles: [dir.file("rules.yaml")], targets: ["127.0.0.1:\(port)"], in: dir)
            defer { prometheus.stop() }

            // Every group loaded, every rule evaluated at least once without error.
            var groups: [[String: Any]] = []
            var unhealthy: [String] = ["not evaluated yet"]
            for _ in 0..<100 where !unhealthy.isEmpty {
                try await Task.sleep(for: .milliseconds(200))
                groups = try await prometheus.ruleGroups()
                let rules = groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }
                unhealthy = rules.filter { $0["health"] as? String != "ok" }.map { "\($0["name"] ?? "?"): \($0["health"] ?? "?") \($0["lastError"] ?? "")" }
                if rules.isEmpty { unhealthy = ["no rules"] }
            }
            #expect(Set(groups.compactMap { $0["name"] as? String }) == ["apitrace-api-errors", "apitrace-apps-decoding", "apitrace-news-spike", "apitrace-live-comments"])
            #expect(unhealthy.isEmpty, "\(unhealthy)")

            // The scrape: per-route counts equal the trace file's.
            var counts: [String: Double] = [:]
            for _ in 0..<100 where counts.count < 2 {
                try await Task.sleep(for: .milliseconds(200))
                for sample in try await prometheus.query("sum by (url_template) (apitrace_http_client_requests_total{app_version=\"2.1.0\"})") {
                    counts[sample.labels["url_template"] ?? "?"] = sample.value
                }
            }
            #expect(counts == ["/apps/{id}": 30, "/news": 20])
            // Asked until answered: a scrape that misses its 1 s timeout on a loaded machine marks the
            // series stale until the next one.
            var failures: Double?
            for _ in 0..<100 where failures == nil {
                failures = try await prometheus.query("sum(apitrace_http_client_requests_total{outcome=\"server_error\"})").first?.value
                if failures == nil { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(failures == 3)
        }
    }
}
