import APITraceCollector
import APITraceExport
import APITraceFormat
import Foundation
import Testing

@Suite("Grafana dashboard")
struct GrafanaDashboardTests {
    static let dashboardPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Dashboards/grafana/apitrace-dashboard.json")

    /// Every metric and label name the exporter writes for events of every type.
    func exported() -> (metrics: Set<String>, labels: Set<String>) {
        var exporter = OpenMetricsExporter()
        let t = TraceTimestamp(millisecondsSince1970: 0)
        for event in [
            TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/a", host: "h", status: 200, durationMs: 1))),
            TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/a", host: "h", status: 404, durationMs: 1))),
            TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/a", host: "h", durationMs: 1, error: "URLError.timedOut"))),
            TraceEvent(timestamp: t, .decodeFailure(.init(route: "/a", entity: "App", kind: .keyNotFound, path: "x", message: ""))),
            TraceEvent(timestamp: t, .error(.init(identity: "E.e", message: ""))),
            TraceEvent(timestamp: t, .sse(.init(phase: .reconnect, route: "/s"))),
            TraceEvent(timestamp: t, .websocket(.init(phase: .close, route: "/w", code: 1006, reason: "abnormal", closedBy: "network"))),
            TraceEvent(timestamp: t, .dropped(.init(count: 1, reason: "buffer_full"))),
        ] { exporter.add(event, appVersion: "2.1.0") }
        return Self.names(in: exporter.text())
    }

    /// Every metric and label name the collector's `/metrics` serves after storing a file with
    /// events of every type (scraped twice: a new series shows at 0 first).
    func collected() throws -> (metrics: Set<String>, labels: Set<String>) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-collector-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let collector = try TraceCollector(configuration: .init(directory: dir, tokens: ["t"]))
        let lines = [
            #"{"type":"header","format":"apitrace","version":1,"producer":"p","app_version":"2.1.0","started":"2026-11-22T09:00:00.000Z"}"#,
            #"{"type":"request","ts":"2026-11-22T09:00:00.000Z","method":"GET","route":"/a","host":"h","status":200,"duration_ms":1}"#,
            #"{"type":"request","ts":"2026-11-22T09:00:00.000Z","method":"GET","route":"/a","host":"h","status":404,"duration_ms":1}"#,
            #"{"type":"request","ts":"2026-11-22T09:00:00.000Z","method":"GET","route":"/a","host":"h","duration_ms":1,"error":"URLError.timedOut"}"#,
            #"{"type":"decode_failure","ts":"2026-11-22T09:00:00.000Z","route":"/a","entity":"App","kind":"keyNotFound","path":"x","message":""}"#,
            #"{"type":"error","ts":"2026-11-22T09:00:00.000Z","identity":"E.e","message":""}"#,
            #"{"type":"sse","ts":"2026-11-22T09:00:00.000Z","phase":"reconnect","route":"/s"}"#,
            #"{"type":"websocket","ts":"2026-11-22T09:00:00.000Z","phase":"close","route":"/w","code":1006,"reason":"abnormal","closed_by":"network"}"#,
            #"{"type":"dropped","ts":"2026-11-22T09:00:00.000Z","count":1,"reason":"buffer_full"}"#,
        ]
        let body = try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))
        let reply = body.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }
        #expect(reply.status == 201, "\(reply.message)")
        _ = collector.metrics.openMetricsText
        return Self.names(in: collector.metrics.openMetricsText)
    }

    static func names(in text: String) -> (metrics: Set<String>, labels: Set<String>) {
        var metrics = Set<String>(), labels = Set<String>()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let name = line.prefix { $0 != "{" && $0 != " " }
            metrics.insert(String(name))
            if let open = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}") {
                for pair in line[line.index(after: open)..<close].split(separator: ",") {
                    labels.insert(String(pair.prefix { $0 != "=" }))
                }
            }
        }
        return (metrics, labels)
    }

    @Test("every query uses only metrics and labels the exporter writes")
    func queriesMatchExporter() throws {
        try check(exported())
    }

    @Test("every query uses only metrics and labels the collector serves on /metrics")
    func queriesMatchCollector() throws {
        try check(collected())
    }

    func check(_ names: (metrics: Set<String>, labels: Set<String>)) throws {
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.dashboardPath)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(expressions.count >= 8)
        let (metrics, labels) = names
        let metricPattern = try Regex(#"\b(?:apitrace|http_client)_[a-z_]+\b"#)
        let groupingPattern = try Regex(#"by \(([a-z_, ]+)\)"#)
        let matcherPattern = try Regex(#"([a-z_]+)=~?""#)
        var used = Set<String>()
        for expr in expressions {
            for match in expr.matches(of: metricPattern) {
                let name = String(expr[match.range])
                used.insert(name)
                #expect(metrics.contains(name), "\(name) in `\(expr)` is not exported")
            }
            for match in expr.matches(of: groupingPattern) {
                let names = String(expr[match.range]).dropFirst(4).dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                for label in names { #expect(labels.contains(label), "label \(label) in `\(expr)` is not exported") }
            }
            for match in expr.matches(of: matcherPattern) {
                let label = String(expr[match.range].prefix { $0 != "=" })
                #expect(labels.contains(label), "label \(label) in `\(expr)` is not exported")
            }
        }
        // Route and app version variables, whose values come from labels the exporter writes, filter
        // every panel on request series.
        let variables = try #require((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]])
        #expect(Set(variables.compactMap { $0["name"] as? String }) == ["route", "app_version"])
        let valuesPattern = try Regex(#"label_values\(([a-z_]+), ([a-z_]+)\)"#)
        for variable in variables {
            let query = try #require(variable["definition"] as? String)
            let match = try #require(query.firstMatch(of: valuesPattern), "\(query)")
            #expect(metrics.contains(String(match.output[1].substring!)), "\(query)")
            #expect(labels.contains(String(match.output[2].substring!)), "\(query)")
        }
        for expr in expressions where expr.contains("apitrace_http_client_requests_total") || expr.contains("http_client_request_duration_seconds") {
            #expect(expr.contains(#"url_template=~"$route""#) && expr.contains(#"app_version=~"$app_version""#), "not filtered by the variables: \(expr)")
        }
        #expect(expressions.contains { $0.contains("sum by (outcome)") }, "no error ratio by outcome class")
        #expect(expressions.contains { $0.contains("by (le, app_version)") || $0.contains("sum by (app_version)") }, "no comparison of app versions")

        // And the dashboard shows every family but the histogram's count and sum.
        let families = metrics.filter { !$0.hasSuffix("_count") && !$0.hasSuffix("_sum") && !$0.hasPrefix("apitrace_collector_") }
        #expect(families.isSubset(of: used), "not on the dashboard: \(families.subtracting(used))")
    }
}
