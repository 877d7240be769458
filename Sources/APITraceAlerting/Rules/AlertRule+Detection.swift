extension AlertRule {
    /// A pair of windows of multi-window burn-rate alerting: fires when both burn faster than `factor`.
    ///
    /// Burn rate is the failure ratio divided by the error budget `1 - slo`. The short window
    /// (1/12 of the long one in the SRE Workbook) lets the alert reset soon after recovery.
    package struct BurnRateWindow: Sendable, Equatable, Codable {
        /// The long window, e.g. 1 h.
        package var long: AlertDuration
        /// The short window, e.g. 5 m.
        package var short: AlertDuration
        /// The burn rate both windows must exceed, e.g. 14.4.
        package var factor: Double

        /// Creates a window pair.
        package init(long: AlertDuration, short: AlertDuration, factor: Double) {
            self.long = long
            self.short = short
            self.factor = factor
        }

        /// The SRE Workbook's paging pairs: 1 h and 5 m above 14.4, 6 h and 30 m above 6.
        package static let sreWorkbookDefaults: [BurnRateWindow] = [
            .init(long: .hours(1), short: .minutes(5), factor: 14.4),
            .init(long: .hours(6), short: .minutes(30), factor: 6),
        ]

        /// The defaults: a fast pair, 5 m and 1 m above 14.4, which pages a sharp spike within
        /// minutes (the Workbook's 1 h window needs about 20 minutes of 40% errors at a 99%
        /// objective), then the SRE Workbook's pairs for slower burns.
        package static let defaults: [BurnRateWindow] = [.init(long: .minutes(5), short: .minutes(1), factor: 14.4)] + sreWorkbookDefaults

        /// The failure ratio a window of this pair must exceed under objective `slo`: `factor` times
        /// the error budget, but never more than a quarter of the way from the budget to 100% bad,
        /// so a low objective (a 95% latency rule) still pages when half its requests are bad.
        package func thresholdRatio(slo: Double) -> Double {
            let budget = 1 - slo
            return min(factor * budget, budget + (1 - budget) / 4)
        }
    }

    /// A spike against the traffic's own past: the failure ratio of the last `window` compared
    /// with a baseline ratio.
    package struct SpikeDetection: Sendable, Equatable, Codable {
        /// The recent window, default 30 m.
        package var window: AlertDuration
        /// Where the baseline ratio comes from.
        package var baseline: Baseline
        /// The recent ratio must be at least this many times the baseline; default 3.
        package var factor: Double
        /// ... and at least this much above it (absolute ratio), default 0.02, so 0.1% -> 0.3% does not page.
        package var minIncrease: Double

        /// Creates a spike detection.
        package init(window: AlertDuration = .minutes(30), baseline: Baseline = .trailingDay, factor: Double = 3, minIncrease: Double = 0.02) {
            self.window = window
            self.baseline = baseline
            self.factor = factor
            self.minIncrease = minIncrease
        }

        /// Where a spike's baseline ratio is measured.
        package enum Baseline: String, Sendable, Equatable, Codable, CaseIterable {
            /// The hour centred on the same time one week earlier.
            case sameHourOfWeek = "same_hour_of_week"
            /// The 24 hours before the recent window.
            case trailingDay = "trailing_day"
        }

        /// The baseline's time range for an evaluation at `now` (milliseconds since 1970, half-open).
        package func baselineRange(at now: Int64) -> Range<Int64> {
            switch baseline {
            case .sameHourOfWeek:
                let center = now - AlertDuration.days(7).milliseconds
                return (center - 1_800_000)..<(center + 1_800_000)
            case .trailingDay:
                let end = now - window.milliseconds
                return (end - AlertDuration.days(1).milliseconds)..<end
            }
        }
    }
}

extension AlertRule {
    /// The time ranges (milliseconds since 1970, half-open) whose events evaluations of this
    /// rule at instants from `first` to `last` read.
    package func countedRanges(from first: Int64, to last: Int64) -> [Range<Int64>] {
        var longest = evidenceWindow
        if slo != nil { longest = max(longest, burnRateWindows.map(\.long).max() ?? longest) }
        if let spike { longest = max(longest, spike.window) }
        var ranges = [(first - longest.milliseconds)..<(last + 1)]
        if let spike {
            let a = spike.baselineRange(at: first), b = spike.baselineRange(at: last)
            ranges.append(a.lowerBound..<b.upperBound)
        }
        return ranges
    }
}
