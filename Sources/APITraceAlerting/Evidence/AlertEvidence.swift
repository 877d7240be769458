import APITraceAnalysis
import APITraceFormat
import Foundation

/// What a page says about an incident: the rate against its threshold, the windows, what failed
/// most, and the command that shows the full picture.
///
/// Sent as PagerDuty's `custom_details`, in a webhook's body, and on a command's standard input
/// (snake_case keys).
package struct AlertEvidence: Sendable, Equatable, Codable {
    /// The rule.
    package var rule: String
    /// The traffic it watches (`all`, `route=/apps/{id}`...).
    package var scope: String
    /// For a grouped rule, what the page names first: the group and the rule
    /// (`/profile (api-errors)`), or the rule's summary of many groups firing together.
    package var subject: String?
    /// For a group's page, the group (`route=/profile`); its numbers are the group's alone.
    package var group: String?
    /// The detection that fired, e.g. `burn rate 1h/5m > 14.4`.
    package var detection: String
    /// The headline window's length, e.g. `5m`.
    package var window: String
    /// Failure ratio in that window.
    package var failureRatio: Double
    /// The ratio it exceeded.
    package var thresholdRatio: Double
    /// Burn rate in that window, for burn-rate rules.
    package var burnRate: Double?
    /// The burn rate it exceeded.
    package var burnRateThreshold: Double?
    /// Baseline ratio, for spikes.
    package var baselineRatio: Double?
    /// The rule's SLO, for burn-rate rules.
    package var slo: Double?
    /// Requests in the headline window.
    package var requests: Double
    /// Failures in the headline window.
    package var failures: Double
    /// Every window checked.
    package var windows: [WindowSummary]
    /// The window the top lists cover, e.g. `1h`.
    package var evidenceWindow: String
    /// Routes with the most failures.
    package var topFailingRoutes: [RouteFailures]
    /// Error identities seen most.
    package var topErrorIdentities: [Count]
    /// Decode-failure paths seen most (`Entity path`).
    package var topDecodeFailurePaths: [Count]
    /// The command that prints the full report for the evidence window.
    package var reportCommand: String
    /// The evaluated instant (RFC 3339).
    package var evaluatedAt: String

    /// One window's numbers.
    package struct WindowSummary: Sendable, Equatable, Codable {
        /// Detection it belongs to.
        package var detection: String
        /// Length.
        package var window: String
        /// Requests.
        package var requests: Double
        /// Failures.
        package var failures: Double
        /// Failure ratio.
        package var failureRatio: Double
        /// Threshold ratio.
        package var thresholdRatio: Double
        /// Burn rate, for burn-rate windows.
        package var burnRate: Double?
        /// Whether it passed its threshold and guards.
        package var firing: Bool
        /// Why it was held back, if it was.
        package var heldBack: String?
    }

    /// A route's failures.
    package struct RouteFailures: Sendable, Equatable, Codable {
        /// Route template.
        package var route: String
        /// Failed requests.
        package var failures: Double
        /// All requests.
        package var requests: Double
    }

    /// A value and how often it was seen.
    package struct Count: Sendable, Equatable, Codable {
        /// The value.
        package var value: String
        /// Occurrences.
        package var count: Int
    }

    /// New or regressed failures, for `new_failures` rules: group, app versions, first seen, sessions, example.
    package var newFailures: [NewFailure]?

    /// What accounts for most of the failures beyond the baseline: the evidence window against the
    /// ``comparisonBaseline`` before it (``FailureComparison/headline``); nil when nothing is in excess.
    package var extraFailures: ExtraFailures?

    /// The baseline the evidence window is compared with: this long, right before it.
    package static let comparisonBaseline = AlertDuration.hours(6)

    /// The row that accounts for the largest share of the extra failures.
    package struct ExtraFailures: Sendable, Equatable, Codable {
        /// The sentence a page shows: `Most of the extra failures: 91% /apps/{id} on app 2.4.0`.
        package var line: String
        /// The row's share of its dimension's extra failures (0...1).
        package var share: Double
        /// The dimension (`app_version_route`, `route`, `host`, `app_version`).
        package var dimension: String
        /// The row, as `/apps/{id} on app 2.4.0`.
        package var row: String
        /// Failures beyond the baseline's rate in the whole evidence window.
        package var excessFailures: Double
        /// What the window was compared with, e.g. `the 6h before the evidence window`.
        package var baseline: String

        /// The line for a row: `Most of the extra failures: 91% …` (`Largest share of …` under half).
        static func line(share: Double, row: String) -> String {
            let percent = "\(Int((share * 100).rounded()))%"
            return "\(share >= 0.5 ? "Most" : "Largest share") of the extra failures: \(percent) \(row)"
        }
    }

    /// Builds the evidence of a detection.
    package init(
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
