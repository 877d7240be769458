import APITraceTestSupport
import Foundation
import Testing

/// The whole loop, as CI runs it: the faulty sample server and the instrumented sample client
/// (both real, on 127.0.0.1), then the report, the alert and the exports over what they wrote.
@Suite("apitrace-demo, end to end", .serialized)
struct DemoTests {
    /// One demo run shared by the suite's tests (they run one after another).
    actor DemoRun {
        static let shared = DemoRun()
        private var result: (dir: String, stdout: String)?

        func traces() async throws -> (dir: String, stdout: String) {
            if let result { return result }
            let dir = NSTemporaryDirectory() + "apitrace-demo-test-\(UUID().uuidString.prefix(8))"
            let run = try await runOffPool(try builtProduct("apitrace-demo").path, ["--short", "--trace-dir", dir])
            try #require(run.status == 0, "apitrace-demo failed: \(String(decoding: run.stderr, as: UTF8.self))")
            result = (dir, String(decoding: run.stdout, as: UTF8.self))
            return result!
        }
    }

    func report() async throws -> [String: Any] {
        let traces = try await DemoRun.shared.traces()
        let result = try await runOffPool(try builtProduct("apitrace").path, ["report", "--format", "json", traces.dir])
        #expect(result.status == 0)
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    @Test("the demo prints the report and the page the alert would send")
    func demoOutput() async throws {
        let stdout = try await DemoRun.shared.traces().stdout
        for heading in ["TOTALS", "ROUTES", "DECODE FAILURES", "SERVER-SENT EVENTS", "WEBSOCKETS", "ALERT"] {
            #expect(stdout.contains(heading), "no \(heading) section")
        }
        #expect(stdout.contains("api-errors TRIGGERED"))
        #expect(stdout.contains("<redacted: $PD_ROUTING_KEY>"))
        #expect(!stdout.contains("demo-routing-key"), "the routing key leaked")
    }

    @Test("the live comments WebSocket shows the server's drop, its 1011 close and its late pongs")
    func liveComments() async throws {
        let report = try await report()
        let ws = try #require(report["websocket"] as? [String: Any])
        #expect((ws["connections"] as? Int ?? 0) >= 3, "\(ws)")
        let codes = (ws["abnormal_by_code"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(codes.contains("1006 abnormal") && codes.contains("1011 server_error"), "\(codes)")
        #expect((ws["reconnects"] as? Int ?? 0) >= 2)
        #expect((ws["messages_in"] as? Int ?? 0) > 0)
        // Late pongs: the traced round trips are at least the server's 300 ms delay.
        let traces = try await DemoRun.shared.traces()
        let lines = try await runOffPool(try builtProduct("apitrace").path, ["cat", "--type", "websocket", traces.dir])
        let rtts = String(decoding: lines.stdout, as: UTF8.self).split(separator: "\n").compactMap { line -> Double? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["ping_rtt_ms"] as? Double
        }
        #expect(!rtts.isEmpty && rtts.allSatisfy { $0 >= 290 }, "\(rtts)")
    }

    @Test("the report shows every injected fault")
    func everyFaultShows() async throws {
        let report = try await report()
        let totals = try #require(report["totals"] as? [String: Any])
        // 5xx share and the spike.
        #expect((totals["server_errors"] as? Int ?? 0) > 0)
        let points = try #require((report["time_series"] as? [String: Any])?["points"] as? [[String: Any]])
        let rates = points.filter { ($0["requests"] as? Int ?? 0) >= 5 }.compactMap { $0["error_rate"] as? Double }
        #expect((rates.max() ?? 0) >= 0.4, "no spike in \(rates)")
        #expect((rates.min() ?? 1) <= 0.2, "errors everywhere, not a spike: \(rates)")
        // Slow responses: the server delays 5% of them by 400 ms.
        let routes = try #require(report["routes"] as? [[String: Any]])
        let maxLatency = routes.compactMap { ($0["latency_ms"] as? [String: Any])?["max"] as? Double }.max() ?? 0
        #expect(maxLatency >= 390)
        // Apps without `stability`.
        let decode = try #require(report["decode_failures"] as? [[String: Any]])
        #expect(decode.contains { $0["path"] as? String == "data.apps[*].stability" && $0["key"] as? String == "stability" && ($0["count"] as? Int ?? 0) > 0 })
        // SSE drops, each followed by a reconnect.
        let sse = try #require(report["sse"] as? [String: Any])
        #expect((sse["reconnects"] as? Int ?? 0) >= 1)
        let reasons = (sse["reasons"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        #expect(reasons.contains("network_error"))
    }

    @Test("the exports agree with the report: one HAR entry per request, metrics with the stability path", .requires(.prometheusClient))
    func exports() async throws {
        let traces = try await DemoRun.shared.traces()
        let requests = try #require((try await report()["totals"] as? [String: Any])?["requests"] as? Int)
        let har = try await runOffPool(try builtProduct("apitrace").path, ["export", "--format", "har", traces.dir])
        #expect(har.status == 0)
        let log = try #require((try JSONSerialization.jsonObject(with: har.stdout) as? [String: Any])?["log"] as? [String: Any])
        #expect((log["entries"] as? [Any])?.count == requests)

        let metrics = try await runOffPool(try builtProduct("apitrace").path, ["export", "--format", "prometheus", traces.dir])
        #expect(metrics.status == 0)
        let text = String(decoding: metrics.stdout, as: UTF8.self)
        #expect(text.hasSuffix("# EOF\n"))
        #expect(text.contains(#"path="data.apps[*].stability""#))
        let parsed = try await runOffPool("/usr/bin/env", ["python3", "-c", """
            import sys
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            total = sum(s.value for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples if s.name == "apitrace_http_client_requests_total")
            print(int(total))
            """], stdin: metrics.stdout)
        #expect(parsed.status == 0, "\(String(decoding: parsed.stderr, as: UTF8.self))")
        #expect(String(decoding: parsed.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == String(requests))
    }
}
