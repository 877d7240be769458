package import APITraceFormat

/// One message to deliver: an incident triggered (or repeated) or resolved.
///
/// Stored in the state when a delivery fails, without any secret, so the next run can retry it.
package struct AlertNotification: Sendable, Equatable, Codable {
    /// Trigger or resolve.
    package var action: Action
    /// The rule.
    package var rule: String
    /// The incident's id, stable for its whole life: PagerDuty's `dedup_key`.
    package var incidentID: String
    /// Severity of the rule.
    package var severity: AlertRule.Severity
    /// One line, at most 1024 characters.
    package var summary: String
    /// When the notification was made (RFC 3339).
    package var timestamp: String
    /// True for a repeat of a trigger already sent.
    package var isRepeat: Bool
    /// The evidence, for triggers.
    package var evidence: AlertEvidence?
    /// The rule's scope (`all`, `route=/apps/{id}`...), on every notification: Alertmanager's `scope` label.
    package var scope: String?
    /// When the incident started (RFC 3339): Alertmanager's `startsAt`.
    package var incidentStarted: String?
    /// The command showing the full report, when there is no evidence to carry it (Alertmanager re-sends).
    package var reportCommand: String?
    /// The group of a grouped rule the incident is for (its keys become Alertmanager labels).
    package var group: AlertGroup?

    /// What happened to the incident.
    package enum Action: String, Sendable, Equatable, Codable {
        /// The incident started, or still fires after the repeat interval.
        case trigger
        /// The incident stayed recovered for the rule's `resolve_after`.
        case resolve
    }

    /// PagerDuty's limit on `summary`.
    package static let summaryLimit = 1024

    /// Creates a notification; the summary is cut to 1024 characters.
    package init(action: Action, rule: String, incidentID: String, severity: AlertRule.Severity, summary: String,
                timestamp: TraceTimestamp, isRepeat: Bool = false, evidence: AlertEvidence? = nil,
                scope: String? = nil, incidentStarted: TraceTimestamp? = nil, reportCommand: String? = nil) {
        self.action = action
        self.rule = rule
        self.incidentID = incidentID
        self.severity = severity
        self.summary = summary.count > Self.summaryLimit ? String(summary.prefix(Self.summaryLimit - 1)) + "…" : summary
        self.timestamp = timestamp.rfc3339
        self.isRepeat = isRepeat
        self.evidence = evidence
        self.scope = scope ?? evidence?.scope
        self.incidentStarted = incidentStarted?.rfc3339
        self.reportCommand = reportCommand ?? evidence?.reportCommand
    }

    /// The summary of a trigger, e.g.
    /// `api-errors: 23.4% of requests failing over 5m (burn rate 23.4x > 14.4x of SLO 99%), top route /apps/{id}`.
    package static func triggerSummary(_ e: AlertEvidence) -> String {
        if let failures = e.newFailures, let first = failures.first {
            var text = "\(e.rule): \(first.line)"
            if let path = first.examplePath, !path.isEmpty { text += ", e.g. at \(path)" }
            if failures.count > 1 { text += "; and \(failures.count - 1) more" }
            return text
        }
        var text = "\(e.subject ?? e.rule): \(RuleDetector.percent(e.failureRatio)) of requests failing over \(e.window)"
        text += " (\(Int(e.failures))/\(Int(e.requests))"
        if let burn = e.burnRate, let threshold = e.burnRateThreshold, let slo = e.slo {
            text += ", burn rate \(RuleDetector.format(burn))x > \(RuleDetector.format(threshold))x of SLO \(RuleDetector.format(slo * 100))%"
        } else if let baseline = e.baselineRatio {
            text += ", baseline \(RuleDetector.percent(baseline)), threshold \(RuleDetector.percent(e.thresholdRatio))"
        } else {
            text += ", threshold \(RuleDetector.percent(e.thresholdRatio))"
        }
        text += ")"
        if e.scope != "all" { text += " [\(e.scope)]" }
        if let route = e.topFailingRoutes.first { text += "; top route \(route.route) (\(Int(route.failures)) failures)" }
        if let identity = e.topErrorIdentities.first { text += "; top error \(identity.value)" }
        if let extra = e.extraFailures { text += "; " + ExtraFailuresText.lowercasedFirst(AlertEvidence.ExtraFailures.line(share: extra.share, row: AlertEvidence.cut(extra.row, 120))) }
        return text
    }
}

/// The extra-failures line inside a sentence.
enum ExtraFailuresText {
    /// `Most of …` -> `most of …`.
    static func lowercasedFirst(_ s: String) -> String { s.prefix(1).lowercased() + s.dropFirst() }
}
