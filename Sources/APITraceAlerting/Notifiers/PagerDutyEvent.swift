/// A PagerDuty Events API v2 event (`POST /v2/enqueue`).
///
/// Triggers carry `payload` (summary at most 1024 characters, source, severity, timestamp,
/// component, group, class, custom_details with the evidence); resolves carry only the routing
/// key, the action and the incident's `dedup_key`.
public struct PagerDutyEvent: Sendable, Equatable, Encodable {
    /// The integration's routing key (a secret, from the environment).
    public var routingKey: String
    /// `trigger` or `resolve`.
    public var eventAction: String
    /// The incident's stable key (at most 255 characters).
    public var dedupKey: String
    /// The event body, for triggers.
    public var payload: Payload?
    /// Name of the sending tool.
    public var client = "apitrace"

    /// The `payload` object of a trigger.
    public struct Payload: Sendable, Equatable, Encodable {
        /// One line, at most 1024 characters.
        public var summary: String
        /// Where it happened: the host running `apitrace alert`.
        public var source: String
        /// `critical`, `error`, `warning` or `info`.
        public var severity: String
        /// When (RFC 3339).
        public var timestamp: String
        /// The watched traffic.
        public var component: String
        /// The rule.
        public var group: String
        /// Kind of problem: `error_rate`.
        public var `class`: String
        /// The evidence.
        public var customDetails: AlertEvidence?
    }

    /// Builds the event for a notification.
    public init(_ n: AlertNotification, routingKey: String, source: String) {
        self.routingKey = routingKey
        eventAction = n.action.rawValue
        dedupKey = String(n.incidentID.prefix(255))
        if n.action == .trigger {
            payload = Payload(
                summary: n.summary, source: source, severity: n.severity.rawValue, timestamp: n.timestamp,
                component: n.evidence?.scope ?? "all", group: n.rule, class: "error_rate", customDetails: n.evidence)
        }
    }
}

/// A Slack incoming-webhook message: `text` (the notification fallback) and `blocks`.
public struct SlackMessage: Sendable, Equatable, Encodable {
    /// Plain text shown in notifications and by clients without blocks.
    public var text: String
    /// Block Kit layout.
    public var blocks: [Block]

    /// A `section` or `context` block with mrkdwn text.
    public struct Block: Sendable, Equatable, Encodable {
        /// `section` or `context`.
        public var type: String
        /// For sections.
        public var text: Text?
        /// For context blocks.
        public var elements: [Text]?
    }

    /// A Block Kit text object.
    public struct Text: Sendable, Equatable, Encodable {
        /// `mrkdwn`.
        public var type = "mrkdwn"
        /// The text.
        public var text: String
    }

    /// Builds the message for a notification.
    public init(_ n: AlertNotification) {
        let marker: String
        switch n.action {
        case .trigger: marker = n.isRepeat ? ":rotating_light: still firing" : ":rotating_light: firing"
        case .resolve: marker = ":white_check_mark: resolved"
        }
        text = "[\(n.severity.rawValue.uppercased())] \(marker): \(n.summary)"
        var lines = ["*\(n.rule)* \(marker) (\(n.severity.rawValue))", n.summary]
        if let e = n.evidence {
            if !e.topFailingRoutes.isEmpty {
                lines.append("*Top failing routes:* " + e.topFailingRoutes.map { "`\($0.route)` \(Int($0.failures))/\(Int($0.requests))" }.joined(separator: ", "))
            }
            if !e.topErrorIdentities.isEmpty {
                lines.append("*Top errors:* " + e.topErrorIdentities.map { "`\($0.value)` \($0.count)" }.joined(separator: ", "))
            }
            if !e.topDecodeFailurePaths.isEmpty {
                lines.append("*Top decode failures:* " + e.topDecodeFailurePaths.map { "`\($0.value)` \($0.count)" }.joined(separator: ", "))
            }
        }
        blocks = [Block(type: "section", text: Text(text: String(lines.joined(separator: "\n").prefix(3000))))]
        var context = ["incident `\(n.incidentID)`"]
        if let e = n.evidence { context.append("full report: `\(e.reportCommand)`") }
        blocks.append(Block(type: "context", elements: context.map { Text(text: $0) }))
    }
}
