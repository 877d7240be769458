/// One entry of a rules file's `notifiers`: where and how to deliver pages.
///
/// Secrets never appear in the rules file: a PagerDuty routing key and a Slack or webhook URL
/// that embeds a token are read from the environment variables the entry names.
public struct NotifierConfiguration: Sendable, Equatable {
    /// The notifier's name, as rules refer to it in `notify`.
    public var name: String
    /// The kind of service.
    public var kind: Kind
    /// A URL written in the rules file (not secret), e.g. PagerDuty's endpoint or a receiver on 127.0.0.1.
    public var url: String?
    /// Environment variable holding the URL, for Slack and webhooks whose URL is the secret.
    public var urlEnvironmentVariable: String?
    /// Environment variable holding the PagerDuty routing key.
    public var routingKeyEnvironmentVariable: String?
    /// For `command`: the shell command run with the page's JSON on standard input.
    public var command: String?
    /// Whether resolutions are sent too (default true, as Alertmanager does for PagerDuty and Slack).
    public var sendResolved: Bool
    /// Deliveries tried per run before the notification is kept for the next run (default 3).
    public var maxAttempts: Int
    /// Line of the entry in the rules file, for messages.
    public var line: Int?

    /// The kinds of notifier.
    public enum Kind: String, Sendable, Equatable, CaseIterable, Codable {
        /// PagerDuty Events API v2.
        case pagerduty
        /// Slack incoming webhook.
        case slack
        /// Any HTTP endpoint taking a JSON body.
        case webhook
        /// A local command.
        case command
    }

    /// Creates a notifier configuration.
    public init(
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
    public static let pagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"
}
