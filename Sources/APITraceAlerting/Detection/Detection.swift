/// The outcome of evaluating one rule at one instant: whether it fires, and every window looked at.
public struct Detection: Sendable, Equatable, Codable {
    /// The rule's name.
    public var rule: String
    /// The evaluated instant (milliseconds since 1970).
    public var at: Int64
    /// True when some detection fired.
    public var firing: Bool
    /// Every window checked, firing ones first.
    public var checks: [WindowCheck]
    /// New or regressed failures found (rules with `new_failures`).
    public var newFailures: [NewFailure]?

    /// Creates a detection.
    public init(rule: String, at: Int64, firing: Bool, checks: [WindowCheck]) {
        self.rule = rule
        self.at = at
        self.firing = firing
        self.checks = checks
    }

    /// One window compared with its threshold.
    public struct WindowCheck: Sendable, Equatable, Codable {
        /// What the window belongs to, e.g. `burn rate 1h/5m > 14.4` or `spike vs trailing_day`.
        public var detection: String
        /// The window's length.
        public var window: AlertDuration
        /// Requests and failures in it.
        public var totals: WindowTotals
        /// The failure ratio it must exceed.
        public var thresholdRatio: Double
        /// Failure ratio over the error budget, for burn-rate windows.
        public var burnRate: Double?
        /// The factor the burn rate must exceed, for burn-rate windows.
        public var burnRateThreshold: Double?
        /// The baseline ratio, for spikes.
        public var baselineRatio: Double?
        /// The Wilson lower bound of the ratio, when the rule has a confidence check.
        public var lowerBound: Double?
        /// True when this window is above its threshold with enough requests and confidence.
        public var passed: Bool
        /// Why a window above its threshold did not pass (too few requests, low confidence, no baseline).
        public var heldBack: String?

        /// Creates a check.
        public init(
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
    public var headline: WindowCheck? { checks.first(where: \.passed) ?? checks.first }
}
