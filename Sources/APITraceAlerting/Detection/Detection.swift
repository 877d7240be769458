/// The outcome of evaluating one rule at one instant: whether it fires, and every window looked at.
package struct Detection: Sendable, Equatable, Codable {
    /// The rule's name.
    package var rule: String
    /// The evaluated instant (milliseconds since 1970).
    package var at: Int64
    /// True when some detection fired.
    package var firing: Bool
    /// Every window checked, firing ones first.
    package var checks: [WindowCheck]
    /// New or regressed failures found (rules with `new_failures`).
    package var newFailures: [NewFailure]?

    /// Creates a detection.
    package init(rule: String, at: Int64, firing: Bool, checks: [WindowCheck]) {
        self.rule = rule
        self.at = at
        self.firing = firing
        self.checks = checks
    }

    /// One window compared with its threshold.
    package struct WindowCheck: Sendable, Equatable, Codable {
        /// What the window belongs to, e.g. `burn rate 1h/5m > 14.4` or `spike vs trailing_day`.
        package var detection: String
        /// The window's length.
        package var window: AlertDuration
        /// Requests and failures in it.
        package var totals: WindowTotals
        /// The failure ratio it must exceed.
        package var thresholdRatio: Double
        /// Failure ratio over the error budget, for burn-rate windows.
        package var burnRate: Double?
        /// The factor the burn rate must exceed, for burn-rate windows.
        package var burnRateThreshold: Double?
        /// The baseline ratio, for spikes.
        package var baselineRatio: Double?
        /// The Wilson lower bound of the ratio, when the rule has a confidence check.
        package var lowerBound: Double?
        /// True when this window is above its threshold with enough requests and confidence.
        package var passed: Bool
        /// Why a window above its threshold did not pass (too few requests, low confidence, no baseline).
        package var heldBack: String?

        /// Creates a check.
        package init(
            detection: String, window: AlertDuration, totals: WindowTotals, thresholdRatio: Double, burnRate: Double? = nil,
            burnRateThreshold: Double? = nil, baselineRatio: Double? = nil, lowerBound: Double? = nil, passed: Bool, heldBack: String? = nil
        ) {
            self.detection = detection
            self.window = window
            self.totals = totals
            self.thresholdRatio = thresholdRatio
            self.burnRate = burnRate
            self.burnRateThreshold = burnRateThreshold
            self.baselineRatio = baselineRatio
            self.lowerBound = lowerBound
            self.passed = passed
            self.heldBack = heldBack
        }
    }

    /// The check that explains the page best: the first passing one of the first firing pair.
    package var headline: WindowCheck? { checks.first(where: \.passed) ?? checks.first }
}
