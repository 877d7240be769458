import APITraceTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Prometheus (Debian package `prometheus`) started for one test on 127.0.0.1, with a
/// generated configuration: the given rule files, static scrape targets, 1 s scrape and
/// evaluation intervals; queried over its HTTP API.
struct RunningPrometheus: Sendable {
    let process: ChildProcess
    let port: Int

    /// Starts Prometheus scraping `targets`, evaluating `ruleFiles`, and sending its alerts to the
    /// Alertmanagers at `alertmanagers` (`host:port`), if any.
    static func start(binary: String, ruleFiles: [String], targets: [String], alertmanagers: [String] = [], in dir: TemporaryDirectory) async throws -> RunningPrometheus {
        var config = """
            global: {scrape_interval: 1s, evaluation_interval: 1s}
            rule_files: [\(ruleFiles.map { "'\($0)'" }.joined(separator: ", "))]
            scrape_configs:
              - job_name: apitrace
                static_configs: [{targets: [\(targets.map { "'\($0)'" }.joined(separator: ", "))]}]

            """
        if !alertmanagers.isEmpty {
            config += "alerting:\n  alertmanagers: [{static_configs: [{targets: [\(alertmanagers.map { "'\($0)'" }.joined(separator: ", "))]}]}]\n"
        }
        try config.write(toFile: dir.file("prometheus.yml"), atomically: true, encoding: .utf8)
        let port = try freePort()
        let process = try ChildProcess(binary, [
            "--config.file=\(dir.file("prometheus.yml"))", "--storage.tsdb.path=\(dir.file("prometheus-data"))",
            "--web.listen-address=127.0.0.1:\(port)"])
        try await process.waitUntilReady(URL(string: "http://127.0.0.1:\(port)/-/ready")!)
        return RunningPrometheus(process: process, port: port)
    }

    func stop() { process.stop() }

    /// `GET /api/v1/<path>` and its `data`.
    func api(_ path: String, query: [URLQueryItem] = []) async throws -> Any {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/api/v1/\(path)")!
        if !query.isEmpty { components.queryItems = query }
        let (data, _) = try await URLSession.shared.data(from: components.url!)
        let body = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard body?["status"] as? String == "success", let result = body?["data"] else {
            throw RunningAlertmanager.Failure(description: "Prometheus answered \(String(decoding: data, as: UTF8.self).prefix(500))")
        }
        return result
    }

    /// The rule groups Prometheus loaded (`/api/v1/rules`).
    func ruleGroups() async throws -> [[String: Any]] {
        ((try await api("rules")) as? [String: Any])?["groups"] as? [[String: Any]] ?? []
    }

    /// An instant query: each result's labels and value.
    func query(_ expr: String) async throws -> [(labels: [String: String], value: Double)] {
        let data = try await api("query", query: [URLQueryItem(name: "query", value: expr)]) as? [String: Any]
        return (data?["result"] as? [[String: Any]] ?? []).map { sample in
            let pair = sample["value"] as? [Any] ?? []
            return (sample["metric"] as? [String: String] ?? [:], Double(pair.last as? String ?? "") ?? .nan)
        }
    }
}
