/// Evaluates a rule with `group_by` at one instant: each group on its own, with every guard of
/// ``RuleDetector`` (burn-rate pairs, recent window, spike, `min_requests`, the Wilson bound)
/// computed over the group's own counts, and the rule's summary when many groups fire together.
///
/// **Many groups at once.** One failure spread over every route should not send one page per
/// route. As Alertmanager's grouping sends one notification for the alerts of a group, a rule
/// pages each group on its own only while at most ``AlertRule/maxGroupPages`` (3) of them fire;
/// when more fire at one evaluation the rule's summary incident opens and pages once, naming the
/// groups, and every group that has not paged yet is *folded* into it (recorded, not paged). The
/// summary keeps firing while any group fires and resolves `resolve_after` after the last one
/// stops; a group that still fires after that pages on its own.
package enum GroupedDetection {
    /// One incident's evaluation: the rule as a whole (or its summary), or one group.
    package struct Evaluated: Sendable {
        package var subject: IncidentTracker.Subject
        package var detection: Detection
    }

    /// The evaluations of `rule` at `now`: for a rule without `group_by`, its `detection` alone.
    package static func evaluate(
        _ rule: AlertRule, detection: Detection, total: FailureCounts, groups: [AlertGroup: FailureCounts], state: AlertState, at now: Int64
    ) -> [Evaluated] {
        rule.groupBy.isEmpty ? [Evaluated(subject: .init(), detection: detection)] : evaluate(rule, total: total, groups: groups, state: state, at: now)
    }

    /// The evaluations of a grouped `rule` at `now`: its summary first, then each group (those counted, and
    /// those with an incident still open, which recover without traffic), by label.
    package static func evaluate(
        _ rule: AlertRule, total: FailureCounts, groups: [AlertGroup: FailureCounts], state: AlertState, at now: Int64
    ) -> [Evaluated] {
        var all = groups
        for incident in state.incidents.values where incident.rule == rule.name {
            if let group = incident.group, all[group] == nil { all[group] = FailureCounts.empty(bucketMilliseconds: total.bucketMilliseconds) }
        }
        let ordered = all.keys.sorted { ($0.isOther ? 1 : 0, $0.label) < ($1.isOther ? 1 : 0, $1.label) }
        let detections = ordered.map { RuleDetector.evaluate(rule, counts: all[$0]!, at: now) }
        let firing = ordered.indices.filter { detections[$0].firing }
        let summaryOpen = state.incidents[rule.name] != nil
        let summaryFires = summaryOpen ? !firing.isEmpty : firing.count > rule.maxGroupPages
        var summary = RuleDetector.evaluate(rule, counts: total, at: now)
        summary.firing = summaryFires
        // Worst first: the groups with the most failures in the headline window.
        let worst = firing.sorted {
            (detections[$0].headline?.totals.failures ?? 0, ordered[$1].label) > (detections[$1].headline?.totals.failures ?? 0, ordered[$0].label)
        }
        let named = worst.prefix(3).map { AlertEvidence.cut(ordered[$0].description, 80) }.joined(separator: ", ")
        let more = worst.count > 3 ? " and \(worst.count - 3) more" : ""
        let summaryName = "\(rule.name): \(firing.count) groups firing at once (\(named)\(more))"
        var out = [Evaluated(subject: .init(group: nil, name: summaryFires ? summaryName : "\(rule.name) (summary of its groups)"), detection: summary)]
        for (i, group) in ordered.enumerated() {
            out.append(Evaluated(
                subject: .init(group: group, name: "\(AlertEvidence.cut(group.description, 200)) (\(rule.name))", folded: summaryOpen || summaryFires),
                detection: detections[i]))
        }
        return out
    }
}

extension FailureCounts {
    /// Counts with no traffic at all (a group whose incident is open but which had no request since).
    static func empty(bucketMilliseconds: Int64) -> FailureCounts {
        FailureCounts(bucketMilliseconds: bucketMilliseconds, firstBucket: 0, requests: [], failures: [])
    }
}
