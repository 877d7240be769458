package import APITraceFormat
import Foundation

/// One `apitrace alert` evaluation: count the traces and detect (no lock); evaluate the incidents
/// and claim the notifications due under the state lock; deliver them without the lock; record
/// the outcome under the lock again; and say what happened in an exit status cron can act on.
///
/// ```swift
/// let rules = try AlertRules.load(path: "alert-rules.yaml")
/// let outcome = await AlertRunner(rules: rules, options: .init(traceDirectory: "traces", statePath: "state.json")).run()
/// outcome.lines.forEach { print($0) }
/// exit(outcome.status.rawValue)
/// ```
package struct AlertRunner: Sendable {
    /// How to run.
    package struct Options: Sendable {
        /// Folder (or files) of traces.
        package var traceDirectory: String
        /// The state file.
        package var statePath: String
        /// The evaluated instant; default now.
        package var now: TraceTimestamp = .now()
        /// Print what would be sent instead of sending, and leave the state untouched.
        package var dryRun = false
        /// Print a line per rule even when nothing changed.
        package var verbose = false
        /// Where secrets are read from.
        package var environment: [String: String] = ProcessInfo.processInfo.environment
        /// PagerDuty `source`: this machine's name.
        package var source: String = ProcessInfo.processInfo.hostName
        /// How long to wait for another run's lock.
        package var lockTimeout: Duration = .seconds(50)
        /// Delivery retry settings.
        package var sender = NotificationSender()
        /// The longest a run goes on delivering, from its start (default 45 s, well within cron's
        /// minute): notifiers are delivered at the same time, every attempt and retry wait ends by
        /// then, and what did not finish is kept as a pending delivery for the next run.
        package var budget: Duration = .seconds(45)
        /// Keep counts of finished trace files in `<state>.counts` so later runs read only new files (not in dry runs).
        package var useCountCache = true

        /// Creates options.
        package init(traceDirectory: String, statePath: String) {
            self.traceDirectory = traceDirectory
            self.statePath = statePath
        }
    }

    /// Exit statuses, documented in `Docs/alerting.md` for cron.
    package enum ExitStatus: Int32, Sendable {
        /// Evaluated; every notification due was delivered (or there were none).
        case ok = 0
        /// Evaluated, but some delivery failed: kept in the state and retried on the next run (or refused with a 4xx).
        case deliveryFailed = 1
        /// The rules file is invalid or a notifier's environment variable is unset.
        case configurationError = 2
        /// The state file could not be read or written.
        case stateError = 3
        /// Another run held the state lock for the whole lock timeout; this run did nothing.
        case locked = 4
    }

    /// What a run did.
    package struct Outcome: Sendable {
        /// Lines for standard output: transitions and deliveries.
        package var lines: [String] = []
        /// Lines for standard error: warnings and failures.
        package var problems: [String] = []
        /// The exit status.
        package var status: ExitStatus = .ok
        /// Files found, opened, and taken from the count cache; event lines scanned.
        package var filesFound = 0, filesOpened = 0, filesFromCache = 0, linesScanned = 0
        /// Per rule, the transition this run made.
        package var transitions: [String: IncidentTracker.Transition] = [:]

        /// Creates an empty outcome.
        package init() {}
    }

    /// The rules.
    package let rules: AlertRules
    /// The options.
    package let options: Options

    /// Creates a runner.
    package init(rules: AlertRules, options: Options) {
        self.rules = rules
        self.options = options
    }

    /// Runs one evaluation.
    package func run() async -> Outcome {
        let runStarted = ContinuousClock.now
        var outcome = Outcome()
        let now = options.now.millisecondsSince1970
        let missing = rules.missingSecrets(in: options.environment).filter { m in rules.rules.contains { $0.notify.contains(m.notifier) } }
        if !missing.isEmpty, !options.dryRun {
            outcome.problems = missing.map { "notifier \($0.notifier): environment variable \($0.variable) is not set" }
            outcome.status = .configurationError
            return outcome
        }
        // Counting happens before taking the lock: it only reads traces, and it is the slow part.
        let cache = options.useCountCache && !options.dryRun ? FileCountCache(path: options.statePath + ".counts") : nil
        let counter = WindowedFailureCounter(
            rules: rules.rules, ranges: rules.rules.flatMap { $0.countedRanges(from: now, to: now) }, cache: cache)
        let counted = counter.count(paths: [options.traceDirectory])
        outcome.filesFound = counted.filesFound
        outcome.filesOpened = counted.filesOpened
        outcome.filesFromCache = counted.filesFromCache
        outcome.linesScanned = counted.linesScanned
        outcome.problems += counted.warnings.map { "warning: \($0)" }
        let detections = rules.rules.indices.map { i in
            let (detection, warnings) = NewFailureDetector.evaluate(
                rules.rules[i], RuleDetector.evaluate(rules.rules[i], counts: counted.counts[i], at: now), paths: [options.traceDirectory], at: now, cache: cache)
            outcome.problems += warnings.map { "warning: \($0)" }
            return detection
        }
        for (i, rule) in rules.rules.enumerated() where i < counted.groupsOverflowed.count && counted.groupsOverflowed[i] {
            outcome.problems.append("warning: rule \(rule.name) saw more than max_groups \(rule.maxGroups) groups; the rest are counted and evaluated together as \(AlertGroup.otherLabel)")
        }
        // Grouped rules are evaluated against the state (their open groups recover without traffic).
        let counts = RunCounts(detections: detections, totals: counted.counts, groups: counted.groups)
        // A damaged cache only costs a full count: said, named, and rebuilt by this save.
        if let problem = cache?.problem { outcome.problems.append("warning: \(problem)") }
        cache?.save()
        let store = StateStore(path: options.statePath)
        if options.dryRun {
            do {
                var state = try store.read()
                let due = evaluate(&state, counts: counts, now: now, outcome: &outcome)
                for delivery in due { show(delivery, outcome: &outcome) }
            } catch {
                outcome.problems.append("\(error)")
                outcome.status = .stateError
            }
            return outcome
        }
        // The evidence of a page due is read from the traces before taking the lock, as the counts are:
        // a peek at the state says which rules will page (under the lock, a rule the peek missed reads it then).
        let tallies = evidenceLikelyNeeded(store: store, counts: counts, now: now)
        // 1. Under the lock: evaluate, update the incidents, and claim what is to be delivered.
        let due: [Delivery]
        var claimed: [Delivery]?
        var notSaved: StateStore.Failure?
        do {
            due = try await store.withLock(timeout: options.lockTimeout) { state in
                let wall = Self.wallClock()
                var due = claimPending(&state, wallClock: wall, outcome: &outcome)
                due += evaluate(&state, counts: counts, now: now, tallies: tallies, outcome: &outcome)
                // One incident's notifications reach a notifier in order: none overtakes an earlier one
                // that another run is delivering (a resolve before its trigger would leave a page open).
                let mine = Set(due.map(\.id))
                let busy = Set(state.pending.filter { $0.isClaimed(at: wall) && !mine.contains($0.id ?? "") }.map(Delivery.orderKey))
                let waiting = due.filter { !$0.isRefresh && busy.contains($0.orderKey) }
                for d in waiting where !state.pending.contains(where: { $0.id == d.id }) {
                    state.pending.append(PendingDelivery(id: d.id, notifier: d.notifier.name, notification: d.notification, attempts: 0, lastError: ""))
                }
                due.removeAll { d in waiting.contains { $0.id == d.id } }
                let claim = wall + claimLength(until: deliveryDeadline(runStarted: runStarted))
                for d in due where !d.isRefresh {
                    if let i = state.pending.firstIndex(where: { $0.id == d.id }) {
                        state.pending[i].claimedUntil = claim
                    } else {
                        state.pending.append(PendingDelivery(
                            id: d.id, notifier: d.notifier.name, notification: d.notification, attempts: 0, lastError: "", claimedUntil: claim))
                    }
                }
                state.pruneMutes(at: now)
                state.lastRun = options.now.rfc3339
                claimed = due
                return due
            }
        } catch let failure as StateStore.Failure where failure.isNotSaved && claimed != nil {
            // Evaluated, but the state could not be written (a full disk): page anyway. Staying
            // silent would leave paging dark while the service fails; a repeat next run carries the
            // same kind of dedup key, and this run says it could not record what it sent.
            notSaved = failure
            due = claimed ?? []
        } catch {
            record(stateFailure: error, outcome: &outcome)
            return outcome
        }
        if let notSaved {
            await deliverUnrecorded(due, failure: notSaved, until: deliveryDeadline(runStarted: runStarted), outcome: &outcome)
            return outcome
        }
        guard !due.isEmpty else { return outcome }
        // 2. Deliver without the lock, all notifiers at once, within the run's budget: an overlapping
        // run evaluates meanwhile and leaves claimed deliveries alone.
        let results = await deliverAll(due, until: deliveryDeadline(runStarted: runStarted), outcome: &outcome)
        // 3. Under the lock again, on the state as it is now: record what was delivered and what failed.
        do {
            try await store.withLock(timeout: options.lockTimeout) { state in
                for (delivery, result) in results { record(result, of: delivery, in: &state, outcome: &outcome) }
                capPending(&state, outcome: &outcome)
            }
        } catch {
            outcome.problems.append("the outcome of \(results.count) deliver\(results.count == 1 ? "y" : "ies") could not be recorded; undelivered ones are retried once their claim expires")
            record(stateFailure: error, outcome: &outcome)
        }
        return outcome
    }

    /// Delivers what a run claimed when its state could not be written, and says so: nothing is
    /// kept for a retry, no transition line claims a page that was not sent, and the run exits 3.
    private func deliverUnrecorded(
        _ due: [Delivery], failure: StateStore.Failure, until deadline: ContinuousClock.Instant, outcome: inout Outcome
    ) async {
        let due = stablyKeyed(due, outcome: &outcome)
        var pagedRules = Set<String>(), unpagedRules = Set<String>()
        // The same concurrent delivery under the run's budget as when the state is written.
        for (delivery, result) in await deliverAll(due, until: deadline, outcome: &outcome) {
            let n = delivery.notification
            let notifier = delivery.notifier
            switch result {
            case .delivered(let attempts):
                if n.action == .trigger { pagedRules.insert(n.rule) }
                if !delivery.isRefresh || options.verbose {
                    outcome.lines.append("  -> \(notifier.name) (\(notifier.kind.rawValue)): \(delivery.isRefresh ? "re-sent the firing alert" : "delivered")\(attempts > 1 ? " after \(attempts) attempts" : "")")
                }
            case .failed(_, let reason), .rejected(_, let reason):
                if n.action == .trigger, !delivery.isRefresh { unpagedRules.insert(n.rule) }
                outcome.problems.append("\(notifier.name): delivery of \(n.action.rawValue) for \(n.rule) failed (\(reason)); not kept for a retry: the state could not be recorded")
            }
        }
        // A trigger no notifier took is not a page: its line says so instead of TRIGGERED.
        let stamp = options.now.rfc3339
        for rule in unpagedRules.subtracting(pagedRules) {
            for word in ["TRIGGERED", "REPEATED"] {
                let prefix = "\(stamp) \(rule) \(word) "
                if let i = outcome.lines.firstIndex(where: { $0.hasPrefix(prefix) }) {
                    outcome.lines[i] = "\(stamp) \(rule) NOT PAGED " + outcome.lines[i].dropFirst(prefix.count)
                        + " (every delivery failed and the state could not be recorded)"
                }
            }
        }
        outcome.problems.append("\(failure.description); could not record the state: \(due.isEmpty ? "nothing was due" : "what was due was sent anyway"), and the next run, not knowing of it, evaluates afresh")
        outcome.status = .stateError
    }

    /// A run that cannot record its state forgets the incident it opened, and the next run opens
    /// another: keyed by its start, each would be a new PagerDuty incident every minute. An
    /// incident opened by such a run is keyed by the start of its rule's repeat interval instead,
    /// so the repeats of one stretch of full disk carry one dedup key and fold into one incident.
    private func stablyKeyed(_ due: [Delivery], outcome: inout Outcome) -> [Delivery] {
        let now = options.now.millisecondsSince1970
        var due = due
        for i in due.indices {
            let n = due[i].notification
            guard n.action == .trigger, !n.isRepeat, !due[i].isRefresh, n.incidentStarted == options.now.rfc3339,
                  let rule = rules.rules.first(where: { $0.name == n.rule }) else { continue }
            let interval = max(60_000, rule.repeatInterval.milliseconds)
            let start = EpochBuckets.start(of: now, width: interval)
            let id = Incident(rule: n.rule, group: n.group, started: start).id
            guard id != n.incidentID else { continue }
            for j in outcome.lines.indices where outcome.lines[j].contains(" \(n.rule) ") {
                outcome.lines[j] = outcome.lines[j].replacingOccurrences(of: " \(n.incidentID):", with: " \(id):")
            }
            due[i].notification.incidentID = id
        }
        return due
    }

    private func record(stateFailure error: any Error, outcome: inout Outcome) {
        if let failure = error as? StateStore.Failure {
            outcome.problems.append(failure.description)
            outcome.status = failure.isLockTimeout ? .locked : .stateError
        } else {
            outcome.problems.append("state: \(error)")
            outcome.status = .stateError
        }
    }

    /// What failed in a rule's evidence window (within one group's traffic for a group): read only
    /// when a page is due, so routine runs skip it.
    private func evidence(for rule: AlertRule, group: AlertGroup?, at now: Int64) -> EvidenceTally {
        let range = (now - rule.evidenceWindow.milliseconds)..<now
        let baseline = (range.lowerBound - AlertEvidence.comparisonBaseline.milliseconds)..<range.lowerBound
        var rule = rule
        rule.groupBy = []
        rule.onlyGroup = group
        return WindowedFailureCounter(rules: [rule], ranges: [baseline.lowerBound..<now], evidenceRanges: [range], comparisonBaselines: [baseline])
            .count(paths: [options.traceDirectory]).evidence[0]
    }

    /// A run's counts: per rule, the detection over its whole traffic and a grouped rule's groups.
    struct RunCounts {
        var detections: [Detection]
        var totals: [FailureCounts]
        var groups: [[AlertGroup: FailureCounts]]

        /// What to track incidents for in rule `i`, given the state's open incidents.
        func evaluations(_ rule: AlertRule, _ i: Int, state: AlertState, at now: Int64) -> [GroupedDetection.Evaluated] {
            GroupedDetection.evaluate(rule, detection: detections[i], total: totals[i], groups: i < groups.count ? groups[i] : [:], state: state, at: now)
        }
    }

    /// The evidence tallies (by incident key) of the rules and groups that would page if the state stays as it is now.
    private func evidenceLikelyNeeded(store: StateStore, counts: RunCounts, now: Int64) -> [String: EvidenceTally] {
        guard var peek = try? store.read() else { return [:] }
        var tallies: [String: EvidenceTally] = [:]
        for (i, rule) in rules.rules.enumerated() {
            for e in counts.evaluations(rule, i, state: peek, at: now) {
                var needed = false
                _ = IncidentTracker.advance(&peek, rule: rule, detection: e.detection, subject: e.subject, evidence: {
                    needed = true
                    return AlertEvidence(rule: rule, detection: e.detection, tally: EvidenceTally(), traceDirectory: options.traceDirectory)
                }, at: now)
                if needed { tallies[e.subject.stateKey(rule: rule.name)] = evidence(for: rule, group: e.subject.group, at: now) }
            }
        }
        return tallies
    }

    /// Advances every rule's incidents (a grouped rule's: each group's and its summary's); returns
    /// the deliveries their notifications need.
    private func evaluate(_ state: inout AlertState, counts: RunCounts, now: Int64, tallies: [String: EvidenceTally] = [:],
                          outcome: inout Outcome) -> [Delivery] {
        let stamp = options.now.rfc3339
        var due: [Delivery] = []
        for (i, rule) in rules.rules.enumerated() {
            for e in counts.evaluations(rule, i, state: state, at: now) {
                let detection = e.detection, subject = e.subject
                let key = subject.stateKey(rule: rule.name)
                let (transition, notification) = IncidentTracker.advance(
                    &state, rule: rule, detection: detection, subject: subject,
                    evidence: {
                        AlertEvidence(rule: rule, detection: detection, tally: tallies[key] ?? evidence(for: rule, group: subject.group, at: now),
                                      traceDirectory: options.traceDirectory, subject: subject)
                    }, at: now)
                if subject.group == nil { outcome.transitions[rule.name] = transition } else if transition != .quiet { outcome.transitions[key] = transition }
                let incident = state.incidents[key]?.id ?? state.closed.last?.id ?? "-"
                let name = subject.group.map { "\(rule.name) \(AlertEvidence.cut($0.label, 200))" } ?? rule.name
                switch transition {
                case .triggered, .repeated, .resolved:
                    outcome.lines.append("\(stamp) \(rule.name) \(transition.rawValue.uppercased()) \(incident): \(notification?.summary ?? "closed without paging (it was muted, or covered by its rule's summary page)")")
                case .muted:
                    let mute = state.activeMute(for: rule.name, group: subject.group, at: now)
                    outcome.lines.append("\(stamp) \(name) MUTED \(incident) until \(TraceTimestamp(millisecondsSince1970: mute?.until ?? now).rfc3339): \(detection.headline.map(Self.describe) ?? "")")
                case .firing, .recovering, .quiet, .folded:
                    if options.verbose, subject.group == nil || transition != .quiet {
                        outcome.lines.append("\(stamp) \(name) \(transition.rawValue): \(detection.headline.map(Self.describe) ?? "no traffic")")
                    }
                }
                if let notification {
                    for name in rule.notify {
                        guard let notifier = rules.notifiers[name] else { continue }
                        if notification.action == .resolve, !notifier.sendResolved { continue }
                        due.append(Delivery(notifier: notifier, notification: notification))
                    }
                } else if let open = state.incidents[key], open.lastTriggered != nil {
                    due += alertmanagerRefreshes(of: open, rule: rule, at: now)
                }
            }
        }
        return due
    }

    /// Alertmanager expects a firing alert to be re-sent before its `endsAt`: one re-send per run
    /// while the incident is open (firing, recovering or muted after it paged).
    private func alertmanagerRefreshes(of incident: Incident, rule: AlertRule, at now: Int64) -> [Delivery] {
        let targets = rule.notify.compactMap { rules.notifiers[$0] }.filter { $0.kind == .alertmanager }
        guard !targets.isEmpty else { return [] }
        let since = TraceTimestamp(millisecondsSince1970: incident.started - rule.evidenceWindow.milliseconds)
        var refresh = AlertNotification(
            action: .trigger, rule: rule.name, incidentID: incident.id, severity: rule.severity,
            summary: incident.summary ?? "\(rule.name) firing", timestamp: .init(millisecondsSince1970: now), isRepeat: true,
            scope: rule.scope.description, incidentStarted: .init(millisecondsSince1970: incident.started),
            reportCommand: "apitrace report --since \(since.rfc3339) \(AlertEvidence.shellQuoted(options.traceDirectory))")
        refresh.group = incident.group
        return targets.map { Delivery(notifier: $0, notification: refresh, isRefresh: true) }
    }

    /// Takes the failed deliveries of earlier runs that no run is delivering now.
    private func claimPending(_ state: inout AlertState, wallClock: Int64, outcome: inout Outcome) -> [Delivery] {
        for i in state.pending.indices where state.pending[i].id == nil { state.pending[i].id = UUID().uuidString }  // older state files
        var due: [Delivery] = []
        state.pending.removeAll { item in
            guard !item.isClaimed(at: wallClock) else { return false }
            guard let notifier = rules.notifiers[item.notifier] else {
                outcome.problems.append("dropped an undelivered \(item.notification.action.rawValue) of \(item.notification.rule): notifier \(item.notifier) is no longer in the rules file")
                return true
            }
            let previous = item.attempts
            if previous > 0 {
                outcome.lines.append("\(options.now.rfc3339) \(item.notification.rule) RETRY \(item.notification.action.rawValue) \(item.notification.incidentID) (failed \(previous) time\(previous == 1 ? "" : "s") before)")
            }
            due.append(Delivery(id: item.id!, notifier: notifier, notification: item.notification, previousAttempts: previous))
            return false
        }
        return due
    }

    static func describe(_ c: Detection.WindowCheck) -> String {
        var text = "\(c.detection): \(RuleDetector.percent(c.totals.ratio)) over \(c.window) (\(Int(c.totals.failures.rounded()))/\(Int(c.totals.requests.rounded())))"
        text += ", threshold \(RuleDetector.percent(c.thresholdRatio))"
        if let held = c.heldBack { text += "; held back: \(held)" }
        return text
    }
}
