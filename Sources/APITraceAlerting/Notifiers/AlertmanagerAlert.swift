import APITraceFormat

/// One alert of Alertmanager's API v2 (`POST /api/v2/alerts` takes an array of them).
///
/// Encode it without a key strategy: Alertmanager's keys are camelCase. Labels identify the alert (`alertname` and `rule` are the rule's name, with `severity` and
/// `scope`), so the trigger, every re-send and the resolve of one incident are the same alert.
/// A firing alert carries an `endsAt` ``NotifierConfiguration/endsAfter`` ahead of the send, and
/// `apitrace alert` re-sends it on every run while the incident is open, as Alertmanager expects
/// of a client; the resolve sends `endsAt` = the moment it resolved (never later than the
/// Alertmanager's own clock, so it takes effect at once).
///
/// ```json
/// [{"labels": {"alertname": "api-errors", "rule": "api-errors", "severity": "critical", "scope": "all"},
///   "annotations": {"summary": "api-errors: 40% of requests failing over 5m ...", "report_command": "apitrace report --since ...",
///                   "incident_id": "apitrace/api-errors/20261122T120000Z"},
///   "startsAt": "2026-11-22T12:00:00.000Z", "endsAt": "2026-11-22T12:10:00.000Z"}]
/// ```
package struct AlertmanagerAlert: Sendable, Equatable, Encodable {
    /// `alertname`, `rule`, `severity`, `scope`.
    package var labels: [String: String]
    /// `summary`, `report_command`, `incident_id`.
    package var annotations: [String: String]
    /// When the incident started (RFC 3339).
    package var startsAt: String
    /// When the alert stops firing unless re-sent (RFC 3339); the resolve instant for a resolve.
    package var endsAt: String

    /// The alert for a notification; `wallClock` is now on this machine (ms since 1970).
    package init(_ n: AlertNotification, endsAfter: AlertDuration, wallClock: Int64, summaryLimit: Int = 1024) {
        labels = [
            "alertname": n.rule, "rule": n.rule, "severity": n.severity.rawValue,
            "scope": AlertEvidence.cut(n.scope ?? n.evidence?.scope ?? "all", 256),
        ]
        // A group's keys are labels of their own (the collector's names: `url_template`...), so
        // Alertmanager routes and silences groups as it does Prometheus's alerts.
        if let group = n.group, !group.isOther {
            for (key, value) in zip(group.keys, group.values) { labels[key.metricLabel] = AlertEvidence.cut(value, 256) }
        } else if n.group?.isOther == true {
            labels["apitrace_group"] = AlertGroup.otherLabel
        }
        annotations = ["summary": AlertEvidence.cut(n.summary, summaryLimit), "incident_id": n.incidentID]
        if let command = n.reportCommand ?? n.evidence?.reportCommand { annotations["report_command"] = AlertEvidence.cut(command, 1024) }
        let at = TraceTimestamp(rfc3339: n.timestamp)?.millisecondsSince1970 ?? wallClock
        let started = n.incidentStarted.flatMap { TraceTimestamp(rfc3339: $0)?.millisecondsSince1970 } ?? at
        let ends: Int64
        switch n.action {
        case .trigger: ends = max(at, wallClock) + endsAfter.milliseconds
        case .resolve: ends = min(at, wallClock)
        }
        startsAt = TraceTimestamp(millisecondsSince1970: started).rfc3339
        // Alertmanager refuses an end before the start.
        endsAt = TraceTimestamp(millisecondsSince1970: max(ends, started)).rfc3339
    }
}
