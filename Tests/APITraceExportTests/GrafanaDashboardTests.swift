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
            TraceEvent(timestamp: t, .dropped(.init(count: 1, reason: "buffer_full"))),
        ] { exporter.add(event) }
        var metrics = Set<String>(), labels = Set<String>()
        for line in exporter.text().split(separator: "\n") where !line.hasPrefix("#") {
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
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.dashboardPath)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(expressions.count >= 8)
        let (metrics, labels) = exported()
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
        // And the dashboard shows every family but the histogram's count and sum.
        let families = metrics.filter { !$0.hasSuffix("_count") && !$0.hasSuffix("_sum") }
        #expect(families.isSubset(of: used), "not on the dashboard: \(families.subtracting(used))")
    }
}
