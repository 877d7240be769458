import APITraceAnalysis
import APITraceFormat
import Foundation

/// What a page says about an incident: the rate against its threshold, the windows, what failed
/// most, and the command that shows the full picture.
///
/// Sent as PagerDuty's `custom_details`, in a webhook's body, and on a command's standard input
/// (snake_case keys).
public struct AlertEvidence: Sendable, Equatable, Codable {
    /// The rule.
    public var rule: String
    /// The traffic it watches (`all`, `route=/apps/{id}`...).
    public var scope: String
    /// For a grouped rule, what the page names first: the group and the rule
    /// (`/profile (api-errors)`), or the rule's summary of many groups firing together.
    public var subject: String?
    /// For a group's page, the group (`route=/profile`); its numbers are the group's alone.
    public var group: String?
    /// The detection that fired, e.g. `burn rate 1h/5m > 14.4`.
    public var detection: String
    /// The headline window's length, e.g. `5m`.
    public var window: String
    /// Failure ratio in that window.
    public var failureRatio: Double
    /// The ratio it exceeded.
    public var thresholdRatio: Double
    /// Burn rate in that window, for burn-rate rules.
    public var burnRate: Double?
    /// The burn rate it exceeded.
    public var burnRateThreshold: Double?
    /// Baseline ratio, for spikes.
    public var baselineRatio: Double?
    /// The rule's SLO, for burn-rate rules.
    public var slo: Double?
    /// Requests in the headline window.
    public var requests: Double
    /// Failures in the headline window.
    public var failures: Double
    /// Every window checked.
    public var windows: [WindowSummary]
    /// The window the top lists cover, e.g. `1h`.
    public var evidenceWindow: String
    /// Routes with the most failures.
    public var topFailingRoutes: [RouteFailures]
    /// Error identities seen most.
    public var topErrorIdentities: [Count]
    /// Decode-failure paths seen most (`Entity path`).
    public var topDecodeFailurePaths: [Count]
    /// The command that prints the full report for the evidence window.
    public var reportCommand: String
    /// The evaluated instant (RFC 3339).
    public var evaluatedAt: String

    /// One window's numbers.
    public struct WindowSummary: Sendable, Equatable, Codable {
        /// Detection it belongs to.
        public var detection: String
        /// Length.
        public var window: String
        /// Requests.
        public var requests: Double
        /// Failures.
        public var failures: Double
        /// Failure ratio.
        public var failureRatio: Double
        /// Threshold ratio.
        public var thresholdRatio: Double
        /// Burn rate, for burn-rate windows.
        public var burnRate: Double?
        /// Whether it passed its threshold and guards.
        public var firing: Bool
        /// Why it was held back, if it was.
        public var heldBack: String?
    }

    /// A route's failures.
    public struct RouteFailures: Sendable, Equatable, Codable {
        /// Route template.
        public var route: String
        /// Failed requests.
        public var failures: Double
        /// All requests.
        public var requests: Double
    }

    /// A value and how often it was seen.
    public struct Count: Sendable, Equatable, Codable {
        /// The value.
        public var value: String
        /// Occurrences.
        public var count: Int
    }

    /// New or regressed failures, for `new_failures` rules: group, app versions, first seen, sessions, example.
    public var newFailures: [NewFailure]?

    /// What accounts for most of the failures beyond the baseline: the evidence window against the
    /// ``comparisonBaseline`` before it (``FailureComparison/headline``); nil when nothing is in excess.
    public var extraFailures: ExtraFailures?

    /// The baseline the evidence window is compared with: this long, right before it.
    public static let comparisonBaseline = AlertDuration.hours(6)

    /// The row that accounts for the largest share of the extra failures.
    public struct ExtraFailures: Sendable, Equatable, Codable {
        /// The sentence a page shows: `Most of the extra failures: 91% /apps/{id} on app 2.4.0`.
        public var line: String
        /// The row's share of its dimension's extra failures (0...1).
        public var share: Double
        /// The dimension (`app_version_route`, `route`, `host`, `app_version`).
        public var dimension: String
        /// The row, as `/apps/{id} on app 2.4.0`.
        public var row: String
        /// Failures beyond the baseline's rate in the whole evidence window.
        public var excessFailures: Double
        /// What the window was compared with, e.g. `the 6h before the evidence window`.
        public var baseline: String

        /// The line for a row: `Most of the extra failures: 91% …` (`Largest share of …` under half).
        static func line(share: Double, row: String) -> String {
            let percent = "\(Int((share * 100).rounded()))%"
            return "\(share >= 0.5 ? "Most" : "Largest share") of the extra failures: \(percent) \(row)"
        }
    }

    /// Builds the evidence of a detection.
    public init(
        rule: AlertRule, detection: Detection, tally: EvidenceTally, traceDirectory: String, limit: Int = 5,
        subject: IncidentTracker.Subject = .init()
    ) {
        let headline = detection.headline
        self.rule = rule.name
        self.subject = subject.name
        group = subject.group?.label
        scope = rule.scope.description
        self.detection = headline?.detection ?? "none"
        window = headline?.window.description ?? "-"
        failureRatio = Self.round(headline?.totals.ratio ?? 0)
        thresholdRatio = Self.round(headline?.thresholdRatio ?? 0)
        burnRate = headline?.burnRate.map(Self.round)
        burnRateThreshold = headline?.burnRateThreshold
        baselineRatio = headline?.baselineRatio.map(Self.round)
        slo = rule.slo
        requests = (headline?.totals.requests ?? 0).rounded()
        failures = (headline?.totals.failures ?? 0).rounded()
        windows = detection.checks.map {
            WindowSummary(detection: $0.detection, window: $0.window.description, requests: $0.totals.requests.rounded(),
                          failures: $0.totals.failures.rounded(), failureRatio: Self.round($0.totals.ratio),
                          thresholdRatio: Self.round($0.thresholdRatio), burnRate: $0.burnRate.map(Self.round), firing: $0.passed, heldBack: $0.heldBack)
        }
        evidenceWindow = rule.evidenceWindow.description
        topFailingRoutes = tally.routes.filter { $0.value.failures > 0 }
            .sorted { ($0.value.failures, $1.key) > ($1.value.failures, $0.key) }.prefix(limit)
            .map { RouteFailures(route: $0.key, failures: $0.value.failures.rounded(), requests: $0.value.requests.rounded()) }
        topErrorIdentities = Self.top(tally.errorIdentities, limit)
        topDecodeFailurePaths = Self.top(tally.decodePaths, limit)
        let since = TraceTimestamp(millisecondsSince1970: detection.at - rule.evidenceWindow.milliseconds)
        reportCommand = "apitrace report --since \(since.rfc3339) \(Self.shellQuoted(traceDirectory))"
        evaluatedAt = TraceTimestamp(millisecondsSince1970: detection.at).rfc3339
        newFailures = detection.newFailures.map { Array($0.prefix(limit)) }
        let comparison = FailureComparison(tally.comparison, limit: 1)
        if let top = comparison.headline {
            let row = Self.cut(top.label, 512)
            extraFailures = ExtraFailures(
                line: ExtraFailures.line(share: top.share, row: row), share: Self.round(top.share), dimension: top.dimension.rawValue, row: row,
                excessFailures: comparison.excessFailures.rounded(),
                baseline: "the \(Self.comparisonBaseline) before the \(rule.evidenceWindow) evidence window")
        }
    }

    private static func top(_ counts: [String: Int], _ limit: Int) -> [Count] {
        counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(limit).map { Count(value: $0.key, count: $0.value) }
    }

    private static func round(_ v: Double) -> Double { (v * 10_000).rounded() / 10_000 }

    static func shellQuoted(_ text: String) -> String {
        if text.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+:@".contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
