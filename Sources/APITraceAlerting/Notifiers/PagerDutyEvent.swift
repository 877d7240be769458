/// A PagerDuty Events API v2 event (`POST /v2/enqueue`).
///
/// Triggers carry `payload` (summary at most 1024 characters, source, severity, timestamp,
/// component, group, class, custom_details with the evidence); resolves carry only the routing
/// key, the action and the incident's `dedup_key`.
package struct PagerDutyEvent: Sendable, Equatable, Encodable {
    /// The integration's routing key (a secret, from the environment).
    package var routingKey: String
    /// `trigger` or `resolve`.
    package var eventAction: String
    /// The incident's stable key (at most 255 characters).
    package var dedupKey: String
    /// The event body, for triggers.
    package var payload: Payload?
    /// Name of the sending tool.
    package var client = "apitrace"

    /// The `payload` object of a trigger.
    package struct Payload: Sendable, Equatable, Encodable {
        /// One line, at most 1024 characters.
        package var summary: String
        /// Where it happened: the host running `apitrace alert`.
        package var source: String
        /// `critical`, `error`, `warning` or `info`.
        package var severity: String
        /// When (RFC 3339).
        package var timestamp: String
        /// The watched traffic.
        package var component: String
        /// The rule.
        package var group: String
        /// Kind of problem: `error_rate`.
        package var `class`: String
        /// The evidence.
        package var customDetails: AlertEvidence?
    }

    /// Builds the event for a notification.
    package init(_ n: AlertNotification, routingKey: String, source: String, limits: AlertEvidence.Limits = .standard) {
        self.routingKey = routingKey
        eventAction = n.action.rawValue
        dedupKey = String(n.incidentID.prefix(255))
        if n.action == .trigger {
            payload = Payload(
                summary: AlertEvidence.cut(n.summary, AlertNotification.summaryLimit), source: AlertEvidence.cut(source, 255), severity: n.severity.rawValue, timestamp: n.timestamp,
                component: AlertEvidence.cut(n.scope ?? n.evidence?.scope ?? "all", limits.stringLength), group: n.rule,
                class: "error_rate", customDetails: n.evidence?.limited(limits))
        }
    }
}
