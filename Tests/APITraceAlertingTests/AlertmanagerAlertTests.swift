@testable import APITraceAlerting
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The Alertmanager body and configuration without an Alertmanager: the keys its API reads
/// (camelCase, whatever the other notifiers use), the end of a firing alert and of a resolve.
@Suite struct AlertmanagerAlertTests {
    let notifier = NotifierConfiguration(name: "am", kind: .alertmanager, url: "http://127.0.0.1:9093")
    let wall = TraceFixture.now.millisecondsSince1970 + 3_600_000  // this machine's clock, an hour after the evaluated instant

    func notification(_ action: AlertNotification.Action, at minutes: Int64) -> AlertNotification {
        AlertNotification(action: action, rule: "api-errors", incidentID: "apitrace/api-errors/x", severity: .error,
                          summary: "api-errors: 40% failing", timestamp: TraceFixture.at(minutes: minutes),
                          scope: "route=/apps/{id}", incidentStarted: TraceFixture.now, reportCommand: "apitrace report --since x traces")
    }

    func body(_ n: AlertNotification) throws -> [String: Any] {
        let request = try NotificationRequest(n, for: notifier, environment: [:], source: "host", wallClock: wall)
        #expect(request.url?.absoluteString == "http://127.0.0.1:9093/api/v2/alerts")
        let array = try #require(try JSONSerialization.jsonObject(with: request.body) as? [[String: Any]])
        #expect(array.count == 1)
        return array[0]
    }

    @Test func aFiringAlertEndsAheadOfTheLaterOfBothClocks() throws {
        let alert = try body(notification(.trigger, at: 5))
        #expect(Set(alert.keys) == ["labels", "annotations", "startsAt", "endsAt"])
        #expect(alert["labels"] as? [String: String] == ["alertname": "api-errors", "rule": "api-errors", "severity": "error", "scope": "route=/apps/{id}"])
        let annotations = try #require(alert["annotations"] as? [String: String])
        #expect(annotations["summary"] == "api-errors: 40% failing" && annotations["report_command"] == "apitrace report --since x traces")
        #expect(TraceTimestamp(rfc3339: alert["startsAt"] as? String ?? "") == TraceFixture.now)
        #expect(TraceTimestamp(rfc3339: alert["endsAt"] as? String ?? "")?.millisecondsSince1970 == wall + 600_000)
    }

    @Test func aResolveEndsWhenItResolvedNeverAfterTheWallClock() throws {
        let past = try body(notification(.resolve, at: 25))
        #expect(TraceTimestamp(rfc3339: past["endsAt"] as? String ?? "") == TraceFixture.at(minutes: 25))
        // Evaluated "in the future" of this machine (a test's --now): ended now, not later.
        let future = try body(notification(.resolve, at: 120))
        #expect(TraceTimestamp(rfc3339: future["endsAt"] as? String ?? "")?.millisecondsSince1970 == wall)
    }

    @Test func configurationIsChecked() throws {
        let ok = try AlertRules.parse("""
            rules: [{name: a, slo: 0.99, notify: [am]}]
            notifiers: {am: {type: alertmanager, url: "http://am:9093", ends_after: 15m, timeout: 5s}}
            """)
        #expect(ok.notifiers["am"]?.endsAfter == .minutes(15) && ok.notifiers["am"]?.timeout == .seconds(5))
        for (text, message) in [
            ("{am: {type: alertmanager}}", "needs `url`"),
            ("{am: {type: slack, webhook_url_env: X, ends_after: 5m}}", "ends_after is for alertmanager"),
            ("{am: {type: alertmanager, url: \"http://am:9093\", ends_after: 10s}}", "at least 1m"),
            ("{am: {type: alertmanager, url: \"http://am:9093\", timeout: 1h}}", "between 1s and 10m"),
        ] {
            #expect(throws: AlertConfigError.self) { try AlertRules.parse("rules: [{name: a, slo: 0.99, notify: [am]}]\nnotifiers: \(text)") }
            do {
                _ = try AlertRules.parse("rules: [{name: a, slo: 0.99, notify: [am]}]\nnotifiers: \(text)")
            } catch {
                #expect(error.description.contains(message), "\(error)")
            }
        }
    }
}
