import Foundation

/// A notification rendered for one notifier: where it goes and the exact bytes, with the
/// secrets filled in from the environment, and a redacted twin for printing.
public struct NotificationRequest: Sendable {
    /// The notifier.
    public var notifier: NotifierConfiguration
    /// Destination URL (for HTTP notifiers), secret when it came from the environment.
    public var url: URL?
    /// The destination as it may be printed: the URL from the rules file, or `$VARIABLE`.
    public var displayDestination: String
    /// The JSON body.
    public var body: Data
    /// The JSON body with secrets replaced, for `--dry-run` and messages.
    public var redactedBody: Data
    /// Environment for command notifiers.
    public var commandEnvironment: [String: String] = [:]

    /// A notifier that cannot be used (a secret's variable is unset, a URL is malformed).
    public struct Unusable: Error, Sendable, CustomStringConvertible {
        /// What to set or fix.
        public var description: String
    }

    /// Renders `notification` for `notifier`, reading secrets from `environment`.
    public init(_ notification: AlertNotification, for notifier: NotifierConfiguration, environment: [String: String], source: String) throws(Unusable) {
        self.notifier = notifier
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func secret(_ variable: String?, _ what: String) throws(Unusable) -> String? {
            guard let variable else { return nil }
            guard let value = environment[variable], !value.isEmpty else {
                throw Unusable(description: "notifier \(notifier.name): environment variable \(variable) (the \(what)) is not set")
            }
            return value
        }
        let urlText = try secret(notifier.urlEnvironmentVariable, "URL") ?? notifier.url
        displayDestination = notifier.urlEnvironmentVariable.map { "$\($0)" } ?? notifier.url ?? notifier.command ?? "-"
        if notifier.kind != .command {
            guard let text = urlText, let url = URL(string: text), let scheme = url.scheme, scheme == "http" || scheme == "https" else {
                throw Unusable(description: "notifier \(notifier.name): \(displayDestination) is not an http(s) URL")
            }
            self.url = url
        }
        do {
            switch notifier.kind {
            case .pagerduty:
                let key = try secret(notifier.routingKeyEnvironmentVariable, "routing key") ?? ""
                body = try encoder.encode(PagerDutyEvent(notification, routingKey: key, source: source))
                redactedBody = try encoder.encode(PagerDutyEvent(notification, routingKey: "<redacted: $\(notifier.routingKeyEnvironmentVariable ?? "")>", source: source))
            case .slack:
                body = try encoder.encode(SlackMessage(notification))
                redactedBody = body
            case .webhook, .command:
                body = try encoder.encode(notification)
                redactedBody = body
                commandEnvironment = [
                    "APITRACE_ACTION": notification.action.rawValue, "APITRACE_RULE": notification.rule,
                    "APITRACE_INCIDENT": notification.incidentID, "APITRACE_SEVERITY": notification.severity.rawValue,
                    "APITRACE_SUMMARY": notification.summary, "APITRACE_REPEAT": notification.isRepeat ? "1" : "0",
                ]
            }
        } catch let error as Unusable {
            throw error
        } catch {
            throw Unusable(description: "notifier \(notifier.name): cannot encode the notification: \(error)")
        }
    }
}
