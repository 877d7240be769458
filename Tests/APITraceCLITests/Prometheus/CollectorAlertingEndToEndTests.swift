import APITraceTestSupport
import APITraceServerTestSupport
import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The fleet path end to end with the real engines: the built `apitrace collect` (a child process)
/// counts the files it stores, a real Prometheus scrapes it every second with the rules of
/// `apitrace rules --format prometheus` loaded, and a real Alertmanager routes the alert to this
/// test's own webhook receiver.
///
/// The collector counts at ingest, so for Prometheus the events happen when their file is
/// uploaded: the rules' windows are shortened in the rules file itself (a 2 m / 20 s burn-rate
/// pair, a 20 s recent window) so the spike is "now" for seconds, not an hour.
@Suite(.serialized) struct CollectorAlertingEndToEndTests {
    /// One request the test generated, as the test knows it.
    struct Request {
        var route: String
        var status: Int
        var sampleRate: Double?
        /// Requests it stands for: a sampled success 1 / sample_rate (Docs/trace-format.md).
        var weight: Double { status < 400 ? 1 / (sampleRate ?? 1) : 1 }
    }

    /// `count` requests over two routes, `failingPerMille` of every 1000 answered 503, every fourth
    /// success sampled at 0.5.
    static func traffic(_ count: Int, failingPerMille: Int, seed: Int) -> [Request] {
        (0..<count).map { i in
            let k = (i * 389 + seed * 7919) % 1000
            let route = i % 3 == 0 ? "/news" : "/apps/{id}"
            let status = k < failingPerMille ? 503 : 200
            return Request(route: route, status: status, sampleRate: status == 200 && i % 4 == 0 ? 0.5 : nil)
        }
    }

    /// A gzip trace file as Docs/trace-format.md describes it, written by hand (an independent producer).
    static func traceFile(_ requests: [Request], producer: String, appVersion: String, from start: Int64, spacingMs: Int64) throws -> [UInt8] {
        let started = TraceTimestamp(millisecondsSince1970: start).rfc3339
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"\#(producer)","app":"news","app_version":"\#(appVersion)","started":"\#(started)"}"#]
        for (i, r) in requests.enumerated() {
            let ts = TraceTimestamp(millisecondsSince1970: start + Int64(i) * spacingMs).rfc3339
            var line = #"{"type":"request","ts":"\#(ts)","method":"GET","route":"\#(r.route)","host":"api.example.com","status":\#(r.status),"duration_ms":\#(40 + i % 300)"#
            if let rate = r.sampleRate { line += #","sample_rate":\#(rate)"# }
            lines.append(line + "}")
        }
        return try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    static func upload(_ body: [UInt8], port: Int) async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/traces")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.timeoutInterval = 120
        request.setValue("Bearer e2e-token", forHTTPHeaderField: "Authorization")
        request.setValue("application/gzip", forHTTPHeaderField: "Content-Type")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test(.requires(.prometheus, .alertmanager))
    func aSpikeUploadedToTheCollectorPagesThroughPrometheusAndAlertmanagerAndResolves() async throws {
        let dir = TemporaryDirectory()
        try """
            rules:
              - name: api-errors
                slo: 0.99
                burn_rate: [{long: 2m, short: 20s, factor: 5}]
                recent_window: 20s
                min_requests: 100
                resolve_after: 5s
                severity: error
            """.write(toFile: dir.file("alert-rules.yaml"), atomically: true, encoding: .utf8)
        let rules = try await apitrace(["rules", "--format", "prometheus", "--rules", dir.file("alert-rules.yaml"), "--output", dir.file("rules.yaml")])
        try #require(rules.status == 0, "\(rules.stderr)")

        try "e2e-token\n".write(toFile: dir.file("tokens"), atomically: true, encoding: .utf8)
        let port = try freePort()
        let collector = try ChildProcess(try builtProduct("apitrace").path, [
            "collect", "--listen", "127.0.0.1:\(port)", "--dir", dir.file("store"), "--token-file", dir.file("tokens")])
        defer { collector.stop() }
        try await collector.waitUntilReady(URL(string: "http://127.0.0.1:\(port)/health")!)

        try await Receiver.with { receiver in
            let am = try await RunningAlertmanager.start(binary: try #require(OutsideTool.alertmanager.path), webhook: receiver.url("/hook"), in: dir)
            defer { am.stop() }
            let prometheus = try await RunningPrometheus.start(
                binary: try #require(OutsideTool.prometheus.path), ruleFiles: [dir.file("rules.yaml")], targets: ["127.0.0.1:\(port)"],
                alertmanagers: ["127.0.0.1:\(am.port)"], in: dir)
            defer { prometheus.stop() }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var uploaded: [Request] = []

            /// Waits until Prometheus has scraped every request uploaded so far.
            func waitForScrape(_ what: String) async throws {
                let expected = uploaded.reduce(0) { $0 + $1.weight }
                var seen = -1.0
                for _ in 0..<600 where seen != expected {
                    try await Task.sleep(for: .milliseconds(100))
                    seen = try await prometheus.query("sum(apitrace_http_client_requests_total)").first?.value ?? -1
                }
                try #require(seen == expected, "Prometheus saw \(seen) requests after \(what), expected \(expected)")
            }

            // A normal hour, 1% 5xx, in four files of a quarter hour; one of them sent twice.
            var normalFiles: [[UInt8]] = []
            for quarter in 0..<4 {
                let requests = Self.traffic(600, failingPerMille: 10, seed: quarter)
                normalFiles.append(try Self.traceFile(requests, producer: "device\(quarter)", appVersion: "3.1.0", from: now - 3_600_000 + Int64(quarter) * 900_000, spacingMs: 1500))
                uploaded += requests
            }
            for file in normalFiles { #expect(try await Self.upload(file, port: port) == 201) }
            #expect(try await Self.upload(normalFiles[2], port: port) == 200, "a re-sent file is already stored")
            try await waitForScrape("the normal hour")
            try await Task.sleep(for: .seconds(3))
            #expect(receiver.requests(to: "/hook").isEmpty, "paged on normal traffic")

            // A 40% 5xx spike.
            let spike = Self.traffic(1000, failingPerMille: 400, seed: 9)
            #expect(try await Self.upload(try Self.traceFile(spike, producer: "spike", appVersion: "3.1.0", from: now - 60_000, spacingMs: 60), port: port) == 201)
            uploaded += spike
            let firing = try await receiver.waitForHook(status: "firing")
            let page = try #require((firing["alerts"] as? [[String: Any]])?.first)
            let labels = try #require(page["labels"] as? [String: String])
            #expect(labels["alertname"] == "api-errors" && labels["rule"] == "api-errors" && labels["severity"] == "error", "\(labels)")

            // Recovered traffic: the alert resolves once the spike has left the short windows.
            let recovered = Self.traffic(1000, failingPerMille: 5, seed: 11)
            #expect(try await Self.upload(try Self.traceFile(recovered, producer: "recovered", appVersion: "3.1.0", from: now, spacingMs: 60), port: port) == 201)
            uploaded += recovered
            let resolved = try await receiver.waitForHook(status: "resolved", seconds: 150)
            #expect(((resolved["alerts"] as? [[String: Any]])?.first?["labels"] as? [String: String])?["alertname"] == "api-errors")
            #expect(receiver.requests(to: "/hook").compactMap { $0.json["status"] as? String } == ["firing", "resolved"])

            // Prometheus' per-route counts equal the uploaded files' (sampled successes weighed back), the re-sent file counted once.
            try await waitForScrape("the recovered traffic")
            var counts: [String: Double] = [:]
            for sample in try await prometheus.query("sum by (url_template) (apitrace_http_client_requests_total)") {
                counts[sample.labels["url_template"] ?? "?"] = sample.value
            }
            var expected: [String: Double] = [:]
            for r in uploaded { expected[r.route, default: 0] += r.weight }
            #expect(counts == expected)
            let failures = try await prometheus.query(#"sum by (url_template) (apitrace_http_client_requests_total{outcome="server_error"})"#)
            for sample in failures {
                let route = sample.labels["url_template"] ?? "?"
                #expect(sample.value == Double(uploaded.filter { $0.route == route && $0.status == 503 }.count), "\(route)")
            }
            #expect(try await prometheus.query("apitrace_collector_files_accepted_total").first?.value == 6)
            #expect(try await prometheus.query("apitrace_collector_files_duplicate_total").first?.value == 1)
        }
    }
}
