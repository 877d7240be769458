import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("OpenMetrics export")
struct OpenMetricsExporterTests {
    let events: [TraceEvent] = {
        let t = TraceTimestamp(millisecondsSince1970: 1_795_341_600_000)
        var list: [TraceEvent] = []
        for i in 0..<200 {
            let status: Int? = i % 10 == 0 ? 503 : i % 10 == 1 ? 404 : i % 25 == 2 ? nil : 200
            list.append(TraceEvent(timestamp: t, .request(.init(
                method: "GET", route: i % 2 == 0 ? "/apps/{id}" : "/news", host: "api.example.com", status: status,
                durationMs: Double(i * 7 % 900), error: status == nil ? "URLError.timedOut" : nil))))
        }
        list.append(TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/news", host: "api.example.com", status: 200, durationMs: 5, sampleRate: 0.25))))
        list.append(TraceEvent(timestamp: t, .decodeFailure(.init(route: "/apps", entity: "App", kind: .keyNotFound, path: "data.apps[3].stability", key: "stability", message: "missing"))))
        list.append(TraceEvent(timestamp: t, .error(.init(identity: "NewsError.offline", message: "x", suppressed: 4))))
        list.append(TraceEvent(timestamp: t, .sse(.init(phase: .reconnect, route: "/news/stream", delayMs: 1000))))
        list.append(TraceEvent(timestamp: t, .dropped(.init(count: 12, reason: "buffer_full"))))
        list.append(TraceEvent(timestamp: t, .log(.init(level: "info", message: "quote \" and \\ in a label? no, logs are not exported"))))
        return list
    }()

    /// Parses the text with the reference parser (Python's prometheus_client) in a child process and
    /// returns `name{labels} value` per sample, sorted.
    func parsedByPrometheusClient(_ text: String) throws -> [String: Double] {
        let script = """
            import sys, json
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            out = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                for s in family.samples:
                    key = s.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items())) + "}"
                    out[key] = s.value
            print(json.dumps(out))
            """
        let out = try run("/usr/bin/env", ["python3", "-c", script], stdin: Data(text.utf8))
        let message = String(decoding: out.stderr, as: UTF8.self)
        try #require(out.status == 0, "prometheus_client rejected the text (pip install prometheus_client; see Scripts/install-test-deps.sh): \(message)")
        let data = out.stdout
        return try JSONDecoder().decode([String: Double].self, from: data)
    }

    @Test("the reference OpenMetrics parser accepts the text and reads the counts we compute independently", .requires(.prometheusClient))
    func parsesAndCounts() throws {
        var exporter = OpenMetricsExporter()
        events.forEach { exporter.add($0, appVersion: "2.1.0") }
        let samples = try parsedByPrometheusClient(exporter.text())

        // Independent counts over the generated requests.
        let requests = events.compactMap { event -> TraceEvent.Request? in if case .request(let r) = event.payload { return r }; return nil }
        for route in ["/apps/{id}", "/news"] {
            let mine = requests.filter { $0.route == route }
            // A sampled success stands for 1 / sample_rate requests in the histogram as in the counter.
            func weight(_ r: TraceEvent.Request) -> Double { (r.status ?? 500) < 400 ? 1 / (r.sampleRate ?? 1) : 1 }
            let key = "app_version=\"2.1.0\",http_request_method=\"GET\",server_address=\"api.example.com\",url_template=\"\(route)\""
            #expect(samples["http_client_request_duration_seconds_count{\(key)}"] == mine.reduce(0) { $0 + weight($1) })
            #expect(abs((samples["http_client_request_duration_seconds_sum{\(key)}"] ?? -1) - mine.reduce(0) { $0 + weight($1) * $1.durationMs / 1000 }) < 1e-6)
            for bound in OpenMetricsExporter.durationBuckets {
                let expected = mine.filter { $0.durationMs / 1000 <= bound }.reduce(0) { $0 + weight($1) }
                let bucketKey = "app_version=\"2.1.0\",http_request_method=\"GET\",le=\"\(bound)\",server_address=\"api.example.com\",url_template=\"\(route)\""
                #expect(samples["http_client_request_duration_seconds_bucket{\(bucketKey)}"] == expected, "le \(bound) \(route)")
            }
            let serverErrors = mine.filter { ($0.status ?? 0) >= 500 }.count
            #expect(samples["apitrace_http_client_requests_total{app_version=\"2.1.0\",error_class=\"server\",error_type=\"503\",http_request_method=\"GET\",http_response_status_code=\"503\",outcome=\"server_error\",server_address=\"api.example.com\",url_template=\"\(route)\"}"] == (serverErrors > 0 ? Double(serverErrors) : nil))
        }
        let transport = requests.filter { $0.status == nil }.count
        #expect(samples.filter { $0.key.hasPrefix("apitrace_http_client_requests_total{app_version=\"2.1.0\",error_class=\"transport\"") }.values.reduce(0, +) == Double(transport))
        // The sampled success stands for four requests.
        let successes = requests.filter { $0.status == 200 }.count - 1 + 4
        #expect(samples.filter { $0.key.hasPrefix("apitrace_http_client_requests_total{app_version=\"2.1.0\",error_class=\"\"") }.values.reduce(0, +) == Double(successes))
        #expect(samples["apitrace_decode_failures_total{app_version=\"2.1.0\",entity=\"App\",kind=\"keyNotFound\",path=\"data.apps[*].stability\",url_template=\"/apps\"}"] == 1)
        #expect(samples["apitrace_recorded_errors_total{identity=\"NewsError.offline\"}"] == 5)
        #expect(samples["apitrace_sse_events_total{phase=\"reconnect\",reason=\"\",url_template=\"/news/stream\"}"] == 1)
        #expect(samples["apitrace_dropped_events_total{reason=\"buffer_full\"}"] == 12)
    }

    @Test("label values with quotes, backslashes and newlines are escaped", .requires(.prometheusClient))
    func escaping() throws {
        var exporter = OpenMetricsExporter()
        exporter.add(TraceEvent(.error(.init(identity: "Weird\"Error\\x\nline", message: ""))))
        let samples = try parsedByPrometheusClient(exporter.text())
        #expect(samples["apitrace_recorded_errors_total{identity=\"Weird\"Error\\x\nline\"}"] == 1)
    }

    @Test("a route holding CR LF, other controls and combining marks cannot break the scrape", .requires(.prometheusClient))
    func hostileLabels() throws {
        var exporter = OpenMetricsExporter()
        let hostile = "/a\r\n# EOF\r\nfake_total 1\u{1B}[2J\u{0301}\"\\"
        exporter.add(TraceEvent(.request(.init(method: "GET", route: hostile, status: 200, durationMs: 5))))
        exporter.add(TraceEvent(.request(.init(method: "GET", route: "/ok", status: 500, durationMs: 5))))
        let text = exporter.text()
        let samples = try parsedByPrometheusClient(text)
        #expect(samples.keys.contains { $0.contains("url_template=\"/ok\"") })
        #expect(!samples.keys.contains { $0.hasPrefix("fake_total") })
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("# EOF") }.count == 1)
        #expect(!text.unicodeScalars.contains { $0 == "\r" || $0 == "\u{1B}" })
    }
}
