import APITraceFormat
import Foundation

/// One `apitrace alert` evaluation: count the traces, detect, update incidents under the state
/// lock, deliver pages, and say what happened in an exit status cron can act on.
///
/// ```swift
/// let rules = try AlertRules.load(path: "alert-rules.yaml")
/// let outcome = await AlertRunner(rules: rules, options: .init(traceDirectory: "traces", statePath: "state.json")).run()
/// outcome.lines.forEach { print($0) }
/// exit(outcome.status.rawValue)
/// ```
public struct AlertRunner: Sendable {
    /// How to run.
    public struct Options: Sendable {
        /// Folder (or files) of traces.
        public var traceDirectory: String
        /// The state file.
        public var statePath: String
        /// The evaluated instant; default now.
        public var now: TraceTimestamp = .now()
        /// Print what would be sent instead of sending, and leave the state untouched.
        public var dryRun = false
        /// Print a line per rule even when nothing changed.
        public var verbose = false
        /// Where secrets are read from.
        public var environment: [String: String] = ProcessInfo.processInfo.environment
        /// PagerDuty `source`: this machine's name.
        public var source: String = ProcessInfo.processInfo.hostName
        /// How long to wait for another run's lock.
        public var lockTimeout: Duration = .seconds(50)
        /// Delivery retry settings.
        public var sender = NotificationSender()
        /// Keep counts of finished trace files in `<state>.counts` so later runs read only new files (not in dry runs).
        public var useCountCache = true

        /// Creates options.
        public init(traceDirectory: String, statePath: String) {
            self.traceDirectory = traceDirectory
            self.statePath = statePath
        }
    }

    /// Exit statuses, documented in `Docs/alerting.md` for cron.
    public enum ExitStatus: Int32, Sendable {
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
    public struct Outcome: Sendable {
        /// Lines for standard output: transitions and deliveries.
        public var lines: [String] = []
        /// Lines for standard error: warnings and failures.
        public var problems: [String] = []
        /// The exit status.
        public var status: ExitStatus = .ok
        /// Files found, opened, and taken from the count cache; event lines scanned.
        public var filesFound = 0, filesOpened = 0, filesFromCache = 0, linesScanned = 0
        /// Per rule, the transition this run made.
        public var transitions: [String: IncidentTracker.Transition] = [:]

        /// Creates an empty outcome.
        public init() {}
    }

    /// The rules.
    public let rules: AlertRules
    /// The options.
    public let options: Options

    /// Creates a runner.
    public init(rules: AlertRules, options: Options) {
        self.rules = rules
        self.options = options
    }

    /// Runs one evaluation.
    public func run() async -> Outcome {
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
        let detections = rules.rules.indices.map { RuleDetector.evaluate(rules.rules[$0], counts: counted.counts[$0], at: now) }
        let store = StateStore(path: options.statePath)
        do {
            if options.dryRun {
                var state = try store.read()
                await evaluate(&state, detections: detections, now: now, outcome: &outcome)
            } else {
                try await store.withLock(timeout: options.lockTimeout) { state in
                    await retryPending(&state, outcome: &outcome)
                    await evaluate(&state, detections: detections, now: now, outcome: &outcome)
                    state.pruneMutes(at: now)
                    state.lastRun = options.now.rfc3339
                }
            }
        } catch let failure as StateStore.Failure {
            outcome.problems.append(failure.description)
            outcome.status = failure.isLockTimeout ? .locked : .stateError
        } catch {
            outcome.problems.append("state: \(error)")
            outcome.status = .stateError
        }
        return outcome
    }

    /// What failed in a rule's evidence window: read only when a page is due, so routine runs skip it.
    private func evidence(for rule: AlertRule, at now: Int64) -> EvidenceTally {
        let range = (now - rule.evidenceWindow.milliseconds)..<now
        return WindowedFailureCounter(rules: [rule], ranges: [range], evidenceRanges: [range]).count(paths: [options.traceDirectory]).evidence[0]
    }

    private func evaluate(_ state: inout AlertState, detections: [Detection], now: Int64, outcome: inout Outcome) async {
        let stamp = options.now.rfc3339
        for (i, rule) in rules.rules.enumerated() {
            let detection = detections[i]
            let (transition, notification) = IncidentTracker.advance(
                &state, rule: rule, detection: detection,
                evidence: { AlertEvidence(rule: rule, detection: detection, tally: evidence(for: rule, at: now), traceDirectory: options.traceDirectory) }, at: now)
            outcome.transitions[rule.name] = transition
            let incident = state.incidents[rule.name]?.id ?? state.closed.last?.id ?? "-"
            switch transition {
            case .triggered, .repeated, .resolved:
                outcome.lines.append("\(stamp) \(rule.name) \(transition.rawValue.uppercased()) \(incident): \(notification?.summary ?? "closed without paging (it was muted)")")
            case .muted:
                let mute = state.activeMute(for: rule.name, at: now)
                outcome.lines.append("\(stamp) \(rule.name) MUTED \(incident) until \(TraceTimestampText.rfc(mute?.until ?? now)): \(detection.headline.map(Self.describe) ?? "")")
            case .firing, .recovering, .quiet:
                if options.verbose {
                    outcome.lines.append("\(stamp) \(rule.name) \(transition.rawValue): \(detection.headline.map(Self.describe) ?? "no traffic")")
                }
            }
            guard let notification else { continue }
            for name in rule.notify {
                guard let notifier = rules.notifiers[name] else { continue }
                if notification.action == .resolve, !notifier.sendResolved { continue }
                await send(notification, via: notifier, state: &state, outcome: &outcome, previousAttempts: 0)
            }
        }
    }

    private func retryPending(_ state: inout AlertState, outcome: inout Outcome) async {
        let pending = state.pending
        state.pending = []
        for item in pending {
            guard let notifier = rules.notifiers[item.notifier] else {
                outcome.problems.append("dropped an undelivered \(item.notification.action.rawValue) of \(item.notification.rule): notifier \(item.notifier) is no longer in the rules file")
                continue
            }
            outcome.lines.append("\(options.now.rfc3339) \(item.notification.rule) RETRY \(item.notification.action.rawValue) \(item.notification.incidentID) (failed \(item.attempts) time\(item.attempts == 1 ? "" : "s") before)")
            await send(item.notification, via: notifier, state: &state, outcome: &outcome, previousAttempts: item.attempts)
        }
    }

    private func send(_ notification: AlertNotification, via notifier: NotifierConfiguration, state: inout AlertState, outcome: inout Outcome, previousAttempts: Int) async {
        var environment = options.environment
        if options.dryRun {
            for variable in [notifier.routingKeyEnvironmentVariable, notifier.urlEnvironmentVariable].compactMap({ $0 }) where (environment[variable] ?? "").isEmpty {
                environment[variable] = "https://unset.invalid/"
            }
        }
        let request: NotificationRequest
        do {
            request = try NotificationRequest(notification, for: notifier, environment: environment, source: options.source)
        } catch {
            outcome.problems.append(error.description)
            outcome.status = .configurationError
            return
        }
        if options.dryRun {
            outcome.lines.append("  would send to \(notifier.name) (\(notifier.kind.rawValue), \(request.displayDestination)):")
            outcome.lines.append("  " + String(decoding: request.redactedBody, as: UTF8.self))
            return
        }
        let result = await options.sender.deliver(request)
        switch result {
        case .delivered(let attempts):
            outcome.lines.append("  -> \(notifier.name) (\(notifier.kind.rawValue)): delivered\(attempts > 1 ? " after \(attempts) attempts" : "")")
        case .failed(let attempts, let reason):
            outcome.problems.append("\(notifier.name): delivery of \(notification.action.rawValue) for \(notification.rule) failed (\(reason)); kept for the next run")
            state.pending.append(PendingDelivery(notifier: notifier.name, notification: notification, attempts: previousAttempts + attempts, lastError: reason))
            if outcome.status == .ok { outcome.status = .deliveryFailed }
        case .rejected(let reason):
            outcome.problems.append("\(notifier.name): \(notification.action.rawValue) for \(notification.rule) refused (\(reason)); not retried: check the notifier's key or URL")
            if outcome.status == .ok { outcome.status = .deliveryFailed }
        }
    }

    static func describe(_ c: Detection.WindowCheck) -> String {
        var text = "\(c.detection): \(RuleDetector.percent(c.totals.ratio)) over \(c.window) (\(Int(c.totals.failures.rounded()))/\(Int(c.totals.requests.rounded())))"
        text += ", threshold \(RuleDetector.percent(c.thresholdRatio))"
        if let held = c.heldBack { text += "; held back: \(held)" }
        return text
    }
}
