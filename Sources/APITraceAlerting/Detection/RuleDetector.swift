/// Decides whether a rule fires at an instant from its bucketed counts.
///
/// Burn rate: for each window pair, both windows must have at least `min_requests` requests,
/// a failure ratio above the pair's threshold (``AlertRule/BurnRateWindow/thresholdRatio(slo:)``),
/// and (with a confidence check) a Wilson lower bound above that ratio too. Spike: the recent
/// window's ratio must be at least `factor` times the baseline's and `min_increase` above it, with
/// the same request and confidence guards, and the baseline must itself have `min_requests`
/// requests. Either way the rule's ``AlertRule/recentWindow`` must be above the threshold too
/// (its ratio only: a quiet minute at night holds nothing back), so a detection ends minutes
/// after the failures do.
package enum RuleDetector {
    /// Evaluates `rule` at `now` (milliseconds since 1970).
    package static func evaluate(_ rule: AlertRule, counts: FailureCounts, at now: Int64) -> Detection {
        var checks: [Detection.WindowCheck] = []
        var firing = false
        if let slo = rule.slo {
            let budget = 1 - slo
            let recent = counts.totals(in: (now - rule.recentWindow.milliseconds)..<now)
            for pair in rule.burnRateWindows {
                let label = "burn rate \(pair.long)/\(pair.short) > \(format(pair.factor))"
                let threshold = pair.thresholdRatio(slo: slo)
                let windowChecks = [pair.long, pair.short].map { window in
                    check(rule, label: label, window: window, totals: counts.totals(in: (now - window.milliseconds)..<now), threshold: threshold) {
                        $0.burnRate = $0.totals.ratio / budget
                        $0.burnRateThreshold = pair.factor
                    }
                }
                let pairFires = windowChecks.allSatisfy(\.passed) && recent.ratio > threshold
                firing = firing || pairFires
                checks.append(contentsOf: pairFires ? windowChecks.reversed() : windowChecks)
            }
        }
        if let spike = rule.spike {
            let label = "spike vs \(spike.baseline.rawValue) x\(format(spike.factor))"
            let baseline = counts.totals(in: spike.baselineRange(at: now))
            let recent = counts.totals(in: (now - spike.window.milliseconds)..<now)
            let threshold = min(1, max(baseline.ratio * spike.factor, baseline.ratio + spike.minIncrease))
            var c = check(rule, label: label, window: spike.window, totals: recent, threshold: threshold) { $0.baselineRatio = baseline.ratio }
            if c.passed, counts.totals(in: (now - rule.recentWindow.milliseconds)..<now).ratio <= threshold {
                c.passed = false
                c.heldBack = "the last \(rule.recentWindow) are back under the threshold"
            }
            if baseline.requests < Double(rule.minRequests) {
                if c.passed || c.totals.ratio > threshold { c.heldBack = "baseline has \(Int(baseline.requests)) requests, fewer than min_requests \(rule.minRequests)" }
                c.passed = false
            }
            firing = firing || c.passed
            checks.append(c)
        }
        checks.sort { $0.passed && !$1.passed }
        return Detection(rule: rule.name, at: now, firing: firing, checks: checks)
    }

    private static func check(
        _ rule: AlertRule, label: String, window: AlertDuration, totals: WindowTotals, threshold: Double,
        _ customize: (inout Detection.WindowCheck) -> Void
    ) -> Detection.WindowCheck {
        var c = Detection.WindowCheck(detection: label, window: window, totals: totals, thresholdRatio: threshold, passed: false)
        customize(&c)
        let above = totals.ratio > threshold
        if let confidence = rule.confidence, totals.requests > 0 {
            c.lowerBound = WilsonInterval.lowerBound(failures: min(totals.failures, totals.requests), trials: totals.requests, confidence: confidence)
        }
        if above {
            if totals.requests < Double(rule.minRequests) {
                c.heldBack = "\(Int(totals.requests)) requests, fewer than min_requests \(rule.minRequests)"
            } else if let lower = c.lowerBound, lower <= threshold, let confidence = rule.confidence {
                c.heldBack = "too few requests to be sure: \(format(confidence * 100))% lower bound \(percent(lower)) is not above \(percent(threshold))"
            } else {
                c.passed = true
            }
        }
        return c
    }

    static func format(_ v: Double) -> String {
        let rounded = (v * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func percent(_ ratio: Double) -> String {
        let p = ratio * 100
        if p >= 10 { return "\(format((p * 10).rounded() / 10))%" }
        return "\(format((p * 100).rounded() / 100))%"
    }
}
