@testable import APITraceAlerting
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceFormat
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The `alertmanager` notifier against a real Prometheus Alertmanager (Debian's
/// `prometheus-alertmanager`, started here on 127.0.0.1) whose only receiver is a webhook to this
/// test's own receiver: the page and its resolve must come out of Alertmanager's routing.
@Suite(.serialized) struct AlertmanagerNotifierTests {
    @Test(.requires(.alertmanager))
    func aPageAndItsResolveArriveThroughAlertmanagersRouting() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let binary = try #require(OutsideTool.alertmanager.path)
        try await Receiver.with { receiver in
            let am = try await RunningAlertmanager.start(binary: binary, webhook: receiver.url("/hook"), in: dir)
            defer { am.stop() }
            let rules = try TraceFixture.rules("""
                rules:
                  - name: api-errors
                    slo: 0.99
                    severity: error
                    notify: [am]
                notifiers:
                  am: {type: alertmanager, url: "http://127.0.0.1:\(am.port)"}
                """, in: dir)
            func alert(_ minute: Int64) async throws -> ProcessResult {
                try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"), "--now", AlertCommandTests.at(minute)])
            }
            let first = try await alert(0)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout.contains("TRIGGERED") && first.stdout.contains("-> am (alertmanager): delivered"))

            let firing = try await receiver.waitForHook(status: "firing")
            #expect(firing["receiver"] as? String == "test")
            let page = try #require((firing["alerts"] as? [[String: Any]])?.first)
            let labels = try #require(page["labels"] as? [String: String])
            #expect(labels == ["alertname": "api-errors", "rule": "api-errors", "severity": "error", "scope": "all"])
            let annotations = try #require(page["annotations"] as? [String: String])
            #expect(annotations["summary"]?.hasPrefix("api-errors: 40% of requests failing over 1m") == true)
            #expect(annotations["report_command"]?.hasPrefix("apitrace report --since ") == true)
            #expect(annotations["incident_id"]?.hasPrefix("apitrace/api-errors/") == true)
            #expect(TraceTimestamp(rfc3339: page["startsAt"] as? String ?? "") == TraceFixture.now)

            // Re-sent on each run while open: Alertmanager keeps one active alert, its end pushed ahead.
            for minute: Int64 in [1, 2] {
                let run = try await alert(minute)
                #expect(run.status == 0, "\(run.stderr)")
            }
            let active = try await am.alerts()
            #expect(active.count == 1)
            #expect((active.first?["status"] as? [String: Any])?["state"] as? String == "active")
            let endsAt = TraceTimestamp(rfc3339: active.first?["endsAt"] as? String ?? "")?.millisecondsSince1970 ?? 0
            #expect(endsAt > Int64(Date().timeIntervalSince1970 * 1000) + 5 * 60_000)

            var resolvedAt: Int64?
            for minute: Int64 in [5, 10, 15, 20, 25, 30] where resolvedAt == nil {
                let run = try await alert(minute)
                #expect(run.status == 0, "\(run.stderr)")
                if run.stdout.contains("RESOLVED") { resolvedAt = minute }
            }
            let resolvedMinute = try #require(resolvedAt)
            let resolved = try await receiver.waitForHook(status: "resolved")
            let gone = try #require((resolved["alerts"] as? [[String: Any]])?.first)
            #expect((gone["labels"] as? [String: String])?["alertname"] == "api-errors")
            #expect(TraceTimestamp(rfc3339: gone["endsAt"] as? String ?? "") == TraceFixture.at(minutes: resolvedMinute))
            // One page and one resolve came out of Alertmanager, however many re-sends went in.
            let hooks = receiver.requests(to: "/hook").map { $0.json["status"] as? String }
            #expect(hooks == ["firing", "resolved"])
        }
    }
}

/// A Prometheus Alertmanager started for one test, with the reference test configuration.
struct RunningAlertmanager: Sendable {
    let process: ChildProcess
    let port: Int

    static func start(binary: String, webhook: String, in dir: TemporaryDirectory) async throws -> RunningAlertmanager {
        let config = """
            route: {receiver: test, group_wait: 1s, group_interval: 1s, repeat_interval: 1h}
            receivers: [{name: test, webhook_configs: [{url: "\(webhook)", send_resolved: true}]}]
            """
        try config.write(toFile: dir.file("am.yml"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: dir.file("am-data"), withIntermediateDirectories: true)
        let port = try freePort()
        let process = try ChildProcess(binary, [
            "--config.file=\(dir.file("am.yml"))", "--storage.path=\(dir.file("am-data"))",
            "--web.listen-address=127.0.0.1:\(port)", "--cluster.listen-address="])
        try await process.waitUntilReady(URL(string: "http://127.0.0.1:\(port)/-/ready")!)
        return RunningAlertmanager(process: process, port: port)
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    func stop() { process.stop() }

    /// `GET /api/v2/alerts`.
    func alerts() async throws -> [[String: Any]] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/api/v2/alerts")!)
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }

}

extension Receiver {
    /// Waits (up to 60 s) for Alertmanager's webhook with this `status`; returns its JSON.
    func waitForHook(status: String, seconds: Int = 60) async throws -> [String: Any] {
        for _ in 0..<(seconds * 10) {
            if let hook = requests(to: "/hook").first(where: { $0.json["status"] as? String == status }) { return hook.json }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw RunningAlertmanager.Failure(description: "no \(status) notification from Alertmanager within \(seconds) s")
    }
}
