import APITraceFormat
package import Foundation

/// A notification rendered for one notifier: where it goes and the exact bytes, with the
/// secrets filled in from the environment, and a redacted twin for printing.
///
/// Evidence from traces is cut to ``AlertEvidence/Limits/standard`` (and escaped for Slack); a
/// second, smaller body within ``AlertEvidence/Limits/trimmed`` is kept for one more try when the
/// service refuses the first as invalid or too large.
package struct NotificationRequest: Sendable {
    /// The notifier.
    package var notifier: NotifierConfiguration
    /// Destination URL (for HTTP notifiers), secret when it came from the environment.
    package var url: URL?
    /// The destination as it may be printed: `$VARIABLE` for a URL from the environment; the URL
    /// from the rules file without its userinfo, query or token-like path segments.
    package var displayDestination: String
    /// Scrubs this notifier's secrets out of any text about its delivery.
    package var scrubber: SecretScrubber
    /// The JSON body.
    package var body: Data
    /// A smaller body, sent once if the service answers the first with 400 or 413.
    package var trimmedBody: Data?
    /// The JSON body with secrets replaced, for `--dry-run` and messages.
    package var redactedBody: Data
    /// The whole environment of a command notifier's child: `PATH`, `HOME`, the `APITRACE_*`
    /// variables of this process and the notification's own `APITRACE_*` variables; nothing else.
    package var commandEnvironment: [String: String] = [:]

    /// The most PagerDuty accepts in one event is 512 KB; stay clear of it.
    package static let pagerDutyBodyLimit = 500_000

    /// A notifier that cannot be used (a secret's variable is unset, a URL is malformed).
    package struct Unusable: Error, Sendable, CustomStringConvertible {
        /// What to set or fix.
        package var description: String
    }

    /// Renders `notification` for `notifier`, reading secrets from `environment`.
    ///
    /// `wallClock` (ms since 1970, default now) places Alertmanager's `endsAt`: Alertmanager
    /// compares it with its own clock, whatever instant the run evaluated.
    package init(_ notification: AlertNotification, for notifier: NotifierConfiguration, environment: [String: String], source: String,
                wallClock: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) throws(Unusable) {
        self.notifier = notifier
        scrubber = SecretScrubber(notifier: notifier, environment: environment)
        func secret(_ variable: String?, _ what: String) throws(Unusable) -> String? {
            guard let variable else { return nil }
            guard let value = environment[variable], !value.isEmpty else {
                throw Unusable(description: "notifier \(notifier.name): environment variable \(variable) (the \(what)) is not set")
            }
            return value
        }
        var urlText = try secret(notifier.urlEnvironmentVariable, "URL") ?? notifier.url
        if notifier.kind == .alertmanager { urlText = urlText.map(NotifierConfiguration.alertmanagerAlertsURL) }
        displayDestination = notifier.urlEnvironmentVariable.map { "$\($0)" } ?? urlText.map { NotifierConfiguration.displayURL($0, kind: notifier.kind) } ?? notifier.command.map { _ in "command" } ?? "-"
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
                let redacted = "<redacted: $\(notifier.routingKeyEnvironmentVariable ?? "")>"
                body = try Self.encode(PagerDutyEvent(notification, routingKey: key, source: source, limits: .standard))
                trimmedBody = try Self.encode(PagerDutyEvent(notification, routingKey: key, source: source, limits: .trimmed))
                if body.count > Self.pagerDutyBodyLimit, let trimmedBody {
                    body = trimmedBody.count > Self.pagerDutyBodyLimit
                        ? try Self.encode(PagerDutyEvent(notification.withoutEvidence, routingKey: key, source: source, limits: .trimmed))
                        : trimmedBody
                }
                redactedBody = try Self.encode(PagerDutyEvent(notification, routingKey: redacted, source: source, limits: .standard))
            case .slack:
                body = try Self.encode(SlackMessage(notification, limits: .standard))
                trimmedBody = try Self.encode(SlackMessage(notification.withoutEvidence, limits: .trimmed))
                redactedBody = body
            case .alertmanager:
                // Alertmanager's keys are camelCase (`startsAt`): no snake_case conversion.
                body = try Self.encode([AlertmanagerAlert(notification, endsAfter: notifier.endsAfter, wallClock: wallClock, summaryLimit: 1024)], snakeCase: false)
                trimmedBody = try Self.encode([AlertmanagerAlert(notification, endsAfter: notifier.endsAfter, wallClock: wallClock, summaryLimit: 200)], snakeCase: false)
                redactedBody = body
            case .webhook, .command:
                body = try Self.encode(notification.limited(.standard))
                trimmedBody = try Self.encode(notification.limited(.trimmed))
                redactedBody = body
                if notifier.kind == .command {
                    commandEnvironment = Self.childEnvironment(of: environment).merging([
                        "APITRACE_ACTION": notification.action.rawValue, "APITRACE_RULE": notification.rule,
                        "APITRACE_INCIDENT": notification.incidentID, "APITRACE_SEVERITY": notification.severity.rawValue,
                        "APITRACE_SUMMARY": notification.summary, "APITRACE_REPEAT": notification.isRepeat ? "1" : "0",
                    ]) { $1 }
                }
            }
        } catch let error as Unusable {
            throw error
        } catch {
            throw Unusable(description: "notifier \(notifier.name): cannot encode the notification: \(error)")
        }
    }

    /// What a command notifier's child inherits: `PATH`, `HOME` and `APITRACE_*`, never the notifiers' secrets.
    static func childEnvironment(of environment: [String: String]) -> [String: String] {
        var child = environment.filter { $0.key == "PATH" || $0.key == "HOME" || $0.key.hasPrefix("APITRACE_") }
        if child["PATH"] == nil { child["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        return child
    }

    private static func encode(_ value: some Encodable, snakeCase: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        if snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}

extension AlertNotification {
    /// The notification with its evidence within `limits`.
    func limited(_ limits: AlertEvidence.Limits) -> AlertNotification {
        var n = self
        n.evidence = evidence?.limited(limits)
        return n
    }

    /// The notification without evidence: the last resort for a body a service keeps refusing.
    var withoutEvidence: AlertNotification {
        var n = self
        n.evidence = nil
        return n
    }
}
