import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceExport
import APITraceFormat
import Foundation
import Testing

/// The collector counts the events of every file it stores into `/metrics`, once, under the
/// exporter's names; checked over real HTTP with the reference OpenMetrics parser (Python's
/// prometheus_client) against counts the test computes from the lines it wrote.
@Suite("Collector ingest metrics")
struct IngestMetricsTests {
    static let token = "secret-token"

    /// One generated request, as the test knows it.
    struct Request {
        var route: String
        var appVersion: String
        var status: Int?
        var error: String?
        var durationMs: Double
        var sampleRate: Double?

        var outcome: String {
            if let status { return status < 400 ? "success" : status < 500 ? "client_error" : "server_error" }
            return error == "URLError.cancelled" ? "cancelled" : "transport"
        }

        /// A sampled success stands for 1 / sample_rate requests (Docs/trace-format.md).
        var weight: Double { outcome == "success" ? 1 / (sampleRate ?? 1) : 1 }
    }

    /// A trace file following Docs/trace-format.md: its requests and, per file, one decode failure
    /// at an indexed path, one recorded error (3 suppressed), one SSE reconnect and 5 dropped events.
    static func file(index: Int, appVersion: String, requests: [Request]) -> [UInt8] {
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"ingest\#(index)","app":"test","app_version":"\#(appVersion)","started":"2026-11-22T10:\#(String(format: "%02d", index % 60)):00.000Z"}"#]
        for (i, r) in requests.enumerated() {
            var line = #"{"type":"request","ts":"2026-11-22T10:00:00.\#(String(format: "%03d", i % 1000))Z","method":"GET","route":"\#(r.route)","host":"api.example.com","duration_ms":\#(r.durationMs)"#
            if let status = r.status { line += #","status":\#(status)"# }
            if let error = r.error { line += #","error":"\#(error)""# }
            if let rate = r.sampleRate { line += #","sample_rate":\#(rate)"# }
            lines.append(line + "}")
        }
        lines.append(#"{"type":"decode_failure","ts":"2026-11-22T10:00:01.000Z","route":"/apps/{id}","entity":"App","kind":"keyNotFound","path":"data.apps[\#(index)].stability","key":"stability","message":"missing"}"#)
        lines.append(#"{"type":"error","ts":"2026-11-22T10:00:01.000Z","identity":"NewsError.offline","message":"x","suppressed":3}"#)
        lines.append(#"{"type":"sse","ts":"2026-11-22T10:00:01.000Z","phase":"reconnect","route":"/news/stream","delay_ms":1000}"#)
        lines.append(#"{"type":"dropped","ts":"2026-11-22T10:00:01.000Z","count":5,"reason":"buffer_full"}"#)
        return try! GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))
    }

    static func requests(seed: Int, count: Int, routes: [String] = ["/apps/{id}", "/news", "/me"], appVersion: String) -> [Request] {
        (0..<count).map { i in
            let k = (i * 7919 + seed * 104_729) % 1000
            let route = routes[(i + seed) % routes.count]
            let status: Int? = k % 40 == 0 ? nil : k % 13 == 0 ? 503 : k % 11 == 0 ? 404 : 200
            let error: String? = status == nil ? (k % 80 == 0 ? "URLError.cancelled" : "URLError.timedOut") : nil
            // Integer weights (2 and 4): OpenMetrics wants whole bucket counts, which the reference parser checks.
            let rate: Double? = status == 200 ? (k % 3 == 0 ? 0.5 : k % 3 == 1 ? 0.25 : nil) : nil
            return Request(route: route, appVersion: appVersion, status: status, error: error, durationMs: Double(k % 700), sampleRate: rate)
        }
    }

    static func start(_ dir: TemporaryDirectory, ingest: Bool = true, limits: OpenMetricsExporter.Limits = .init()) async throws -> RunningCollector {
        let collector = try TraceCollector(configuration: .init(
            directory: dir.path, tokens: [token], ingestMetrics: ingest, metricLimits: limits))
        return try await RunningCollector.start(collector)
    }

    static func scrape(_ server: RunningCollector) async throws -> String {
        let answer = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        try #require(answer.status == 200)
        return answer.text
    }

    /// `name{sorted labels}` -> value, as Python's prometheus_client reads the OpenMetrics text.
    static func parsed(_ text: String) async throws -> [String: Double] {
        let script = """
            import sys, json
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            out = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                for s in family.samples:
                    out[s.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items())) + "}"] = s.value
            print(json.dumps(out))
            """
        let result = try await runOffPool("/usr/bin/env", ["python3", "-c", script], stdin: Data(text.utf8))
        try #require(result.status == 0, "prometheus_client rejected the exposition (pip install prometheus_client; Scripts/install-test-deps.sh): \(String(decoding: result.stderr, as: UTF8.self))")
        return try JSONDecoder().decode([String: Double].self, from: result.stdout)
    }

    static func sum(_ samples: [String: Double], _ prefix: String, _ parts: [String] = []) -> Double {
        samples.filter { $0.key.hasPrefix(prefix + "{") && parts.allSatisfy($0.key.contains) }.values.reduce(0, +)
    }

    @Test("each stored file's events are counted once, weighted as the format says; a re-sent file adds nothing; new series show at 0 first", .requires(.prometheusClient))
    func countsOnce() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        var all: [Request] = []
        var bodies: [[UInt8]] = []
        for index in 0..<6 {
            let version = index % 2 == 0 ? "1.0" : "2.0"
            let requests = Self.requests(seed: index, count: 150, appVersion: version)
            all += requests
            bodies.append(Self.file(index: index, appVersion: version, requests: requests))
        }
        for body in bodies {
            #expect(try await HTTPClient.upload(server.uploadURL, body).status == 201)
        }
        // The uploader sent two files again (killed before deleting them): stored and counted once.
        #expect(try await HTTPClient.upload(server.uploadURL, bodies[0]).status == 200)
        #expect(try await HTTPClient.upload(server.uploadURL, bodies[3]).status == 200)

        let first = try await Self.parsed(try await Self.scrape(server))
        let eventSamples = first.filter { !$0.key.hasPrefix("apitrace_collector_") }
        #expect(!eventSamples.isEmpty)
        #expect(eventSamples.values.allSatisfy { $0 == 0 }, "a new series must show at 0 in its first scrape")
        #expect(first["apitrace_collector_files_counted_total{}"] == 6)

        let s = try await Self.parsed(try await Self.scrape(server))
        for route in ["/apps/{id}", "/news", "/me"] {
            for version in ["1.0", "2.0"] {
                let mine = all.filter { $0.route == route && $0.appVersion == version }
                let labels = [#"url_template="\#(route)""#, #"app_version="\#(version)""#]
                for outcome in ["success", "client_error", "server_error", "transport", "cancelled"] {
                    let expected = mine.filter { $0.outcome == outcome }.reduce(0) { $0 + $1.weight }
                    #expect(Self.sum(s, "apitrace_http_client_requests_total", labels + [#"outcome="\#(outcome)""#]) == expected, "\(route) \(version) \(outcome)")
                }
                // The histogram weighs sampled successes as the counter does.
                #expect(Self.sum(s, "http_client_request_duration_seconds_count", labels) == mine.reduce(0) { $0 + $1.weight })
                #expect(Self.sum(s, "http_client_request_duration_seconds_bucket", labels + [#"le="0.25""#])
                        == mine.filter { $0.durationMs <= 250 }.reduce(0) { $0 + $1.weight })
                let seconds = mine.reduce(0) { $0 + $1.weight * $1.durationMs / 1000 }
                #expect(abs(Self.sum(s, "http_client_request_duration_seconds_sum", labels) - seconds) < 1e-6)
            }
        }
        #expect(Self.sum(s, "apitrace_http_client_requests_total", [#"error_type="URLError.timedOut""#]) == Double(all.filter { $0.error == "URLError.timedOut" }.count))
        // Per file: one decode failure (indices folded into one path), 1 + 3 suppressed errors, one reconnect, 5 dropped.
        #expect(s[#"apitrace_decode_failures_total{app_version="1.0",entity="App",kind="keyNotFound",path="data.apps[*].stability",url_template="/apps/{id}"}"#] == 3)
        #expect(s[#"apitrace_decode_failures_total{app_version="2.0",entity="App",kind="keyNotFound",path="data.apps[*].stability",url_template="/apps/{id}"}"#] == 3)
        #expect(s[#"apitrace_recorded_errors_total{identity="NewsError.offline"}"#] == 24)
        #expect(s[#"apitrace_sse_events_total{phase="reconnect",reason="",url_template="/news/stream"}"#] == 6)
        #expect(s[#"apitrace_dropped_events_total{reason="buffer_full"}"#] == 30)
        #expect(s["apitrace_collector_events_counted_total{}"] == Double(all.count + 6 * 4))
        #expect(s["apitrace_collector_files_accepted_total{}"] == 6 && s["apitrace_collector_files_duplicate_total{}"] == 2)
    }

    @Test("counters never fall from one scrape to the next, and no series disappears", .requires(.prometheusClient))
    func neverFalls() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        var previous: [String: Double] = [:]
        for index in 0..<5 {
            // Later files bring new routes and versions: new series appear between scrapes.
            let routes = ["/a", "/b", "/c\(index)"]
            let body = Self.file(index: index, appVersion: "v\(index % 3)", requests: Self.requests(seed: index, count: 80, routes: routes, appVersion: "v\(index % 3)"))
            #expect(try await HTTPClient.upload(server.uploadURL, body).status == 201)
            if index == 2 { #expect(try await HTTPClient.upload(server.uploadURL, body).status == 200) }
            let now = try await Self.parsed(try await Self.scrape(server))
            for (series, value) in previous where !series.contains("in_flight") {
                let later = try #require(now[series], "\(series) disappeared")
                #expect(later >= value, "\(series) fell from \(value) to \(later)")
            }
            previous = now
        }
    }

    @Test("routes and error identities past the limits are counted under (other), totals kept", .requires(.prometheusClient))
    func boundedLabels() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, limits: .init(routes: 3, identities: 2))
        defer { Task { await server.stop() } }
        let routes = (0..<10).map { "/items/\($0)" }
        var requests = Self.requests(seed: 1, count: 200, routes: routes, appVersion: "1.0")
        for i in requests.indices where requests[i].error != nil { requests[i].error = "Err.e\(i % 5)"; requests[i].status = nil }
        #expect(try await HTTPClient.upload(server.uploadURL, Self.file(index: 1, appVersion: "1.0", requests: requests)).status == 201)
        _ = try await Self.scrape(server)
        let s = try await Self.parsed(try await Self.scrape(server))
        let requestSeries = s.filter { $0.key.hasPrefix("apitrace_http_client_requests_total{") }
        let routesShown = Set(requestSeries.keys.compactMap { $0.firstMatch(of: /url_template="([^"]*)"/).map { String($0.output.1) } })
        #expect(routesShown.count == 3 && routesShown.contains("(other)"), "\(routesShown)")
        let identities = Set(requestSeries.keys.compactMap { $0.firstMatch(of: /error_type="(Err[^"]*|\(other\))"/).map { String($0.output.1) } })
        #expect(identities.count <= 2, "\(identities)")
        #expect(requestSeries.values.reduce(0, +) == requests.reduce(0) { $0 + $1.weight })
    }

    @Test("with ingest counting off, /metrics holds only the collector's own counters", .requires(.prometheusClient))
    func off() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, ingest: false)
        defer { Task { await server.stop() } }
        #expect(try await HTTPClient.upload(server.uploadURL, Self.file(index: 0, appVersion: "1.0", requests: Self.requests(seed: 0, count: 20, appVersion: "1.0"))).status == 201)
        let s = try await Self.parsed(try await Self.scrape(server))
        #expect(s["apitrace_collector_files_accepted_total{}"] == 1)
        #expect(!s.keys.contains { !$0.hasPrefix("apitrace_collector_") }, "\(s.keys.sorted())")
    }

    @Test("escaped keys and values count as their text and bad JSON counts nowhere, as Python's json reads the file")
    func hostileJSON() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        func line(_ members: String) -> String { #"{"ts":"2026-11-22T10:00:01.000Z","method":"GET","duration_ms":5,"# + members + "}" }
        let lines = [
            #"{"type":"header","format":"apitrace","version":1,"producer":"hostile","app":"test","app_version":"1.0","started":"2026-11-22T10:00:00.000Z"}"#,
            line(#""type":"request","route":"/a","st\u0061tus":200"#),
            line(#""type":"req\u0075est","route":"/a","status":503"#),
            line(#""type":"request","r\u006fute":"\/b","status":503"#),
            line(#""type":"request","route":"/b","status":200,"status":503"#),
            line(#""type":"request","route":"/b\x","status":503"#),
            line(#""type":"request","route":"/b\ud800","status":503"#),
            line(#""type":"request","route":"/b","status":503,"unused":[1,,2]"#),
            line(#""type":"request","route":"/b","status":05"#),
        ]
        let text = lines.joined(separator: "\n") + "\n"
        #expect(try await HTTPClient.upload(server.uploadURL, try GzipDeflater.compress(Array(text.utf8))).status == 201)
        // Python's json, strict: per route and outcome (lone surrogates refused as RFC 8259 asks).
        let oracle = """
            import json, sys
            out = {}
            for raw in sys.stdin.buffer.read().split(b"\\n")[1:]:
                try:
                    o = json.loads(raw.decode("utf-8"), parse_constant=lambda c: 1 / 0)
                    json.dumps(o, ensure_ascii=False).encode("utf-8")
                except Exception:
                    continue
                if o.get("type") != "request": continue
                key = o["route"] + " " + ("server_error" if o["status"] >= 500 else "success")
                out[key] = out.get(key, 0) + 1
            print(json.dumps(out))
            """
        let python = try await runOffPool("/usr/bin/env", ["python3", "-c", oracle], stdin: Data(text.utf8))
        let expected = try JSONDecoder().decode([String: Double].self, from: python.stdout)
        #expect(expected.values.reduce(0, +) == 4, "\(expected)")
        _ = try await Self.scrape(server)  // new series show at 0 first
        let s = try await Self.parsed(try await Self.scrape(server))
        var counted: [String: Double] = [:]
        for (key, value) in s where key.hasPrefix("apitrace_http_client_requests_total{") && value > 0 {
            let route = String(key.split(separator: "url_template=\"")[1].prefix { $0 != "\"" })
            let outcome = String(key.split(separator: "outcome=\"")[1].prefix { $0 != "\"" })
            counted[route + " " + outcome, default: 0] += value
        }
        #expect(counted == expected)
    }

    /// Per (route, status) the weighted requests, and the valid events, of the gzip files in a
    /// folder, as Python's gzip and json read them: the oracle of what the collector counted.
    static let pythonCount = """
        import gzip, json, os, sys
        out = {"requests": {}, "events": 0}
        for root, _, names in os.walk(sys.argv[1]):
            for name in sorted(names):
                if not name.endswith(".jsonl.gz"): continue
                lines = gzip.open(os.path.join(root, name)).read().split(b"\\n")
                for raw in lines[1:-1]:
                    try: o = json.loads(raw)
                    except Exception: continue
                    if o.get("type") not in ("request", "decode_failure", "error", "sse", "log", "dropped", "websocket"): continue
                    if o.get("type") == "request":
                        status = o.get("status")
                        if not isinstance(o.get("duration_ms"), (int, float)) or not (status is None or isinstance(status, int)): continue
                        rate = o.get("sample_rate")
                        weight = 1 / rate if status is not None and status < 400 and rate is not None and 0.0001 <= rate <= 1 else 1
                        key = o["route"] + " " + ("" if status is None else str(status))
                        out["requests"][key] = out["requests"].get(key, 0) + weight
                    out["events"] += 1
        print(json.dumps(out))
        """

    struct PythonCount: Decodable {
        var requests: [String: Double]
        var events: Int
    }

    /// The collector's request counter summed per (route, status), from the parsed exposition.
    static func requestsByRouteAndStatus(_ s: [String: Double]) -> [String: Double] {
        var out: [String: Double] = [:]
        for (key, value) in s where key.hasPrefix("apitrace_http_client_requests_total{") && value > 0 {
            let route = key.firstMatch(of: /url_template="([^"]*)"/).map { String($0.output.1) } ?? "?"
            let status = key.firstMatch(of: /http_response_status_code="([^"]*)"/).map { String($0.output.1) } ?? ""
            out[route + " " + status, default: 0] += value
        }
        return out
    }

    @Test("counted in the pass that checks the upload: /metrics equals Python's count of the stored files; refused uploads (corrupt, gzip bomb behind honest lines) count nothing, a cut one its complete lines, a re-sent one nothing more", .requires(.prometheusClient))
    func countsWhatIsStored() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        // Realistic files (timings, sessions, escapes, transport failures), sampled successes at 0.5.
        let traces = try GeneratedTraces(events: 3000, files: 3, seed: 23, sampleRate: 0.5)
        var sent: [[UInt8]] = []
        for path in traces.paths {
            let body = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            sent.append(body)
            #expect(try await HTTPClient.upload(server.uploadURL, body).status == 201)
        }
        // A re-sent file is already stored and adds nothing.
        #expect(try await HTTPClient.upload(server.uploadURL, sent[1]).status == 200)

        let header = #"{"type":"header","format":"apitrace","version":1,"producer":"refused","app":"test","app_version":"1.0","started":"2026-11-22T10:00:00.000Z"}"#
        func request(_ route: String, _ i: Int) -> String {
            #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"\#(route)","host":"api.example.com","status":503,"duration_ms":\#(i % 90)}"#
        }
        let honest = (0..<500).map { request("/refused-only", $0) }.joined(separator: "\n") + "\n"
        // Refused: honest lines, then bytes that are not another gzip member.
        let corrupt = try GzipDeflater.compress(Array((header + "\n" + honest).utf8)) + [0x00, 0x01, 0x02, 0x03]
        #expect(try await HTTPClient.upload(server.uploadURL, corrupt).status == 400)
        // Refused: honest lines, then a member that inflates a thousandfold (a bomb behind them).
        let bomb = try GzipDeflater.compress(Array((header + "\n" + honest).utf8))
            + GzipDeflater.compress([UInt8](repeating: 0x00, count: 64 << 20), level: 9)
        #expect(try await HTTPClient.upload(server.uploadURL, bomb).status == 413)

        // Cut at a flush point, as a killed app leaves it: 300 complete lines (one of them invalid), then half a line.
        let deflater = try GzipDeflater(level: 5)
        var cut: [UInt8] = []
        var kept = [header.replacingOccurrences(of: "refused", with: "killed")]
        kept += (0..<299).map { request("/cut-kept", $0) }
        kept.append(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/cut-kept","status":"503","duration_ms":1}"#)
        Array((kept.joined(separator: "\n") + "\n").utf8).withUnsafeBytes { deflater.compress($0, flush: .sync, into: &cut) }
        Array(request("/cut-dropped", 0).utf8.prefix(60)).withUnsafeBytes { deflater.compress($0, flush: .sync, into: &cut) }
        let answer = try await HTTPClient.upload(server.uploadURL, cut)
        #expect(answer.status == 201, "\(answer.text)")

        let python = try await runOffPool("/usr/bin/env", ["python3", "-c", Self.pythonCount, dir.path])
        try #require(python.status == 0, "python3: \(String(decoding: python.stderr, as: UTF8.self))")
        let expected = try JSONDecoder().decode(PythonCount.self, from: python.stdout)
        #expect(expected.requests["/cut-kept 503"] == 299, "the stored cut file holds 299 valid requests: \(expected.requests)")
        #expect(expected.requests.keys.allSatisfy { !$0.hasPrefix("/refused-only") && !$0.hasPrefix("/cut-dropped") })

        _ = try await Self.scrape(server)  // new series show at 0 first
        let s = try await Self.parsed(try await Self.scrape(server))
        let counted = Self.requestsByRouteAndStatus(s)
        #expect(Set(counted.keys) == Set(expected.requests.keys))
        for (key, value) in expected.requests {
            #expect(abs((counted[key] ?? -1) - value) < 1e-9, "\(key): counted \(counted[key] ?? -1), Python \(value)")
        }
        #expect(s["apitrace_collector_events_counted_total{}"] == Double(expected.events))
        #expect(s["apitrace_collector_files_counted_total{}"] == 4)
        #expect(s["apitrace_collector_invalid_lines_total{}"] == 1)
        #expect(s["apitrace_collector_files_uncounted_total{}"] == 0)
    }
}
