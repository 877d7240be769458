import Foundation

/// One entry of a rules file's `notifiers`: where and how to deliver pages.
///
/// Secrets never appear in the rules file: a PagerDuty routing key and a Slack or webhook URL
/// that embeds a token are read from the environment variables the entry names.
package struct NotifierConfiguration: Sendable, Equatable {
    /// The notifier's name, as rules refer to it in `notify`.
    package var name: String
    /// The kind of service.
    package var kind: Kind
    /// A URL written in the rules file (not secret), e.g. PagerDuty's endpoint or a receiver on 127.0.0.1.
    package var url: String?
    /// Environment variable holding the URL, for Slack and webhooks whose URL is the secret.
    package var urlEnvironmentVariable: String?
    /// Environment variable holding the PagerDuty routing key.
    package var routingKeyEnvironmentVariable: String?
    /// For `command`: the shell command run with the page's JSON on standard input.
    package var command: String?
    /// Whether resolutions are sent too (default true, as Alertmanager does for PagerDuty and Slack).
    package var sendResolved: Bool
    /// Deliveries tried per run before the notification is kept for the next run (default 3).
    package var maxAttempts: Int
    /// Time allowed for one HTTP request or one run of the command (default: the sender's, 15 s).
    package var timeout: AlertDuration?
    /// For `alertmanager`: how far ahead of each send a firing alert's `endsAt` is set (default 10m).
    /// `apitrace alert` re-sends the alert on every run while its incident is open, so cron must run
    /// more often than this; if it stops, Alertmanager resolves the alert on its own at `endsAt`.
    package var endsAfter: AlertDuration = .minutes(10)
    /// Line of the entry in the rules file, for messages.
    package var line: Int?

    /// The kinds of notifier.
    package enum Kind: String, Sendable, Equatable, CaseIterable, Codable {
        /// PagerDuty Events API v2.
        case pagerduty
        /// Slack incoming webhook.
        case slack
        /// Any HTTP endpoint taking a JSON body.
        case webhook
        /// A local command.
        case command
        /// Prometheus Alertmanager's API v2 (`POST /api/v2/alerts`), for its grouping, inhibition and silences.
        case alertmanager
    }

    /// Creates a notifier configuration.
    package init(
        name: String, kind: Kind, url: String? = nil, urlEnvironmentVariable: String? = nil,
        routingKeyEnvironmentVariable: String? = nil, command: String? = nil, sendResolved: Bool = true,
        maxAttempts: Int = 3, line: Int? = nil
    ) {
        self.name = name
        self.kind = kind
        self.url = url
        self.urlEnvironmentVariable = urlEnvironmentVariable
        self.routingKeyEnvironmentVariable = routingKeyEnvironmentVariable
        self.command = command
        self.sendResolved = sendResolved
        self.maxAttempts = maxAttempts
        self.line = line
    }

    /// PagerDuty's Events API v2 endpoint, used when a `pagerduty` notifier names no `url`.
    package static let pagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"

    /// Alertmanager's alerts endpoint under a notifier's `url` (`http://host:9093` -> `http://host:9093/api/v2/alerts`);
    /// a query or fragment stays where it was (`http://am/x?t=1` -> `http://am/x/api/v2/alerts?t=1`).
    package static func alertmanagerAlertsURL(_ base: String) -> String {
        guard var url = URLComponents(string: base), url.scheme != nil else {
            if base.hasSuffix("/api/v2/alerts") { return base }
            return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/api/v2/alerts"
        }
        var path = url.percentEncodedPath
        if !path.hasSuffix("/api/v2/alerts") { path = (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/api/v2/alerts" }
        url.percentEncodedPath = path
        return url.string ?? base
    }

    /// A URL from the rules file as messages may show it: scheme, host, port and path, without
    /// userinfo or query, and with path segments that look like tokens (every segment, for Slack) as `<redacted>`.
    package static func displayURL(_ text: String, kind: Kind) -> String {
        guard let url = URLComponents(string: text), let scheme = url.scheme, let host = url.host else {
            return SecretScrubber.oneLine(String(text.prefix(40))) + (text.count > 40 ? "…" : "")
        }
        let segments = url.path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            let s = String(segment)
            guard !s.isEmpty else { return s }
            return SecretScrubber.isSecretSegment(s, inSecretURL: kind == .slack) ? SecretScrubber.mark : s
        }
        var out = "\(scheme)://\(url.user != nil ? "<redacted>@" : "")\(host)\(url.port.map { ":\($0)" } ?? "")\(segments.joined(separator: "/"))"
        if url.query != nil { out += "?<redacted>" }
        return SecretScrubber.oneLine(out)
    }
}
