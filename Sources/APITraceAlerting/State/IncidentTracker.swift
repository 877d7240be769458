import APITraceFormat

/// Turns detections into incidents and notifications: page once per incident, repeat only after
/// the rule's `repeat_interval`, resolve after the rate stayed recovered for `resolve_after`.
///
/// A rule that recovers and fires again within `resolve_after` keeps its incident (no second
/// page, no "resolved" in between): that is what stops flapping. A muted rule's incident is
/// opened and counted but not paged; if it still fires when the mute ends, it pages then.
package enum IncidentTracker {
    /// What one evaluation of one rule did.
    package enum Transition: String, Sendable, Equatable {
        /// A new incident paged.
        case triggered
        /// An incident still firing paged again after the repeat interval.
        case repeated
        /// A new or firing incident that a mute kept quiet.
        case muted
        /// Firing, already paged, nothing to send.
        case firing
        /// Below threshold, waiting for `resolve_after` before resolving.
        case recovering
        /// The incident closed; a resolve was sent if it had paged.
        case resolved
        /// Nothing open, nothing firing.
        case quiet
        /// A group firing while its rule's summary page covers the groups firing together:
        /// recorded, not paged on its own.
        case folded
    }

    /// What an incident is tracked for beyond its rule: one group of a grouped rule, or a grouped
    /// rule's summary of many groups firing together.
    package struct Subject: Sendable, Equatable {
        /// The group (nil: the rule as a whole, or its summary).
        package var group: AlertGroup?
        /// What pages name first instead of the rule: `/profile (api-errors)`, or
        /// `api-errors: 12 groups firing at once (...)`.
        package var name: String?
        /// A group firing while its rule's summary page covers it: recorded, not paged (unless it already paged).
        package var folded: Bool

        /// Creates a subject.
        package init(group: AlertGroup? = nil, name: String? = nil, folded: Bool = false) {
            self.group = group
            self.name = name
            self.folded = folded
        }

        /// The key of the incident in the state: the rule's name, or `rule[route=/profile]` for a group.
        package func stateKey(rule: String) -> String {
            group.map { "\(rule)[\($0.label)]" } ?? rule
        }
    }

    /// Advances `state` by one evaluation of `rule`; returns the transition and the notification to send, if any.
    package static func advance(
        _ state: inout AlertState, rule: AlertRule, detection: Detection, subject: Subject = .init(),
        evidence: () -> AlertEvidence, at now: Int64
    ) -> (Transition, AlertNotification?) {
        let key = subject.stateKey(rule: rule.name)
        let muted = state.activeMute(for: rule.name, group: subject.group, at: now) != nil
        if detection.firing {
            var incident = state.incidents[key] ?? Incident(rule: rule.name, group: subject.group, started: now)
            incident.lastFiring = now
            incident.recoveringSince = nil
            defer { state.incidents[key] = incident }
            if muted {
                incident.mutedEvaluations += 1
                return (.muted, nil)
            }
            if subject.folded, incident.lastTriggered == nil { return (.folded, nil) }
            let isRepeat: Bool
            if let last = incident.lastTriggered {
                guard now - last >= rule.repeatInterval.milliseconds else { return (.firing, nil) }
                isRepeat = true
            } else {
                isRepeat = false
            }
            let e = evidence()
            let summary = AlertNotification.triggerSummary(e)
            // Marked paged only once a notifier accepts it (``AlertRunner`` records that after delivering).
            incident.lastTriggered = now
            incident.triggers += 1
            incident.summary = summary
            var notification = AlertNotification(
                action: .trigger, rule: rule.name, incidentID: incident.id, severity: rule.severity,
                summary: summary, timestamp: .init(millisecondsSince1970: now), isRepeat: isRepeat, evidence: e,
                scope: rule.scope.description, incidentStarted: .init(millisecondsSince1970: incident.started))
            notification.group = subject.group
            return (isRepeat ? .repeated : .triggered, notification)
        }
        guard var incident = state.incidents[key] else { return (.quiet, nil) }
        let since = incident.recoveringSince ?? now
        incident.recoveringSince = since
        guard now - since >= rule.resolveAfter.milliseconds else {
            state.incidents[key] = incident
            return (.recovering, nil)
        }
        incident.resolved = now
        state.incidents[key] = nil
        state.closed.append(incident)
        if state.closed.count > 50 { state.closed.removeFirst(state.closed.count - 50) }
        guard incident.lastTriggered != nil else { return (.resolved, nil) }
        let minutes = max(1, (now - incident.started) / 60_000)
        let summary = "\(subject.name ?? rule.name) resolved: failure ratio back under threshold for \(rule.resolveAfter) (incident lasted \(minutes) min, \(incident.triggers) page\(incident.triggers == 1 ? "" : "s"))"
        var resolve = AlertNotification(
            action: .resolve, rule: rule.name, incidentID: incident.id, severity: rule.severity,
            summary: summary, timestamp: .init(millisecondsSince1970: now),
            scope: rule.scope.description, incidentStarted: .init(millisecondsSince1970: incident.started))
        resolve.group = subject.group
        return (.resolved, resolve)
    }
}
