import APITraceFormat

/// Replays the rules over past traces: evaluates every `step` from `since` to `until` with a
/// fresh state (no mutes) and reports when they would have paged and resolved, so people can
/// tune thresholds before going live.
///
/// ```swift
/// let result = Backtest(rules: rules, since: start, until: end).run(paths: ["traces"])
/// for event in result.events { print(event.line) }
/// ```
public struct Backtest: Sendable {
    /// The rules.
    public var rules: AlertRules
    /// First evaluated instant.
    public var since: TraceTimestamp
    /// Last evaluated instant.
    public var until: TraceTimestamp
    /// Time between evaluations, as a cron run every minute would.
    public var step: AlertDuration

    /// Creates a backtest.
    public init(rules: AlertRules, since: TraceTimestamp, until: TraceTimestamp, step: AlertDuration = .minutes(1)) {
        self.rules = rules
        self.since = since
        self.until = until
        self.step = step
    }

    /// A page or a resolution the rules would have sent.
    public struct Event: Sendable, Equatable {
        /// When.
        public var at: TraceTimestamp
        /// Which rule.
        public var rule: String
        /// `triggered`, `repeated` or `resolved`.
        public var transition: IncidentTracker.Transition
        /// The notification's summary.
        public var summary: String

        /// One printable line.
        public var line: String { "\(at.rfc3339) \(transition == .resolved ? "RESOLVE" : transition == .repeated ? "REPEAT " : "PAGE   ") \(summary)" }
    }

    /// What a backtest found.
    public struct Result: Sendable {
        /// Pages and resolutions in time order.
        public var events: [Event] = []
        /// Per rule: evaluations that fired.
        public var firingEvaluations: [String: Int] = [:]
        /// Evaluations per rule.
        public var evaluations = 0
        /// Files opened.
        public var filesOpened = 0
        /// Reading problems.
        public var warnings: [TraceReadWarning] = []

        /// What one rule did over the backtest.
        public struct RuleTally: Sendable, Equatable {
            /// Incidents opened (first pages).
            public var incidents = 0
            /// Pages sent: first pages and repeats.
            public var pages = 0
            /// Evaluations in which the rule fired.
            public var firingEvaluations = 0
        }

        /// The tally of the rule named `rule`.
        public func tally(rule: String) -> RuleTally {
            let mine = events.filter { $0.rule == rule }
            return RuleTally(
                incidents: mine.filter { $0.transition == .triggered }.count, pages: mine.filter { $0.transition != .resolved }.count,
                firingEvaluations: firingEvaluations[rule] ?? 0)
        }

        /// One printable line of a rule's tally: `api-errors: 1 incident, 1 page, firing in 10 of 101 evaluations (7 files read)`.
        public func summaryLine(rule: String) -> String {
            let t = tally(rule: rule)
            func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
            return "\(rule): \(plural(t.incidents, "incident")), \(plural(t.pages, "page")), firing in \(t.firingEvaluations) of \(evaluations) evaluations (\(filesOpened) files read)"
        }
    }

    /// Counts the traces under `paths` once and replays the evaluations.
    public func run(paths: [String]) -> Result {
        let first = since.millisecondsSince1970, last = until.millisecondsSince1970
        let counter = WindowedFailureCounter(rules: rules.rules, ranges: rules.rules.flatMap { $0.countedRanges(from: first, to: last) })
        let counted = counter.count(paths: paths)
        var result = Result(filesOpened: counted.filesOpened, warnings: counted.warnings)
        var state = AlertState()
        // New-failure rules read their baseline at each step: finished files are summarized once.
        let groupCache = FileCountCache()
        var t = first
        let stepMs = max(step.milliseconds, 1000)
        while t <= last {
            result.evaluations += 1
            for (i, rule) in rules.rules.enumerated() {
                let (detection, _) = NewFailureDetector.evaluate(rule, RuleDetector.evaluate(rule, counts: counted.counts[i], at: t), paths: paths, at: t, cache: groupCache)
                if detection.firing { result.firingEvaluations[rule.name, default: 0] += 1 }
                let (transition, notification) = IncidentTracker.advance(
                    &state, rule: rule, detection: detection,
                    evidence: { AlertEvidence(rule: rule, detection: detection, tally: EvidenceTally(), traceDirectory: paths.first ?? ".") }, at: t)
                if let notification, [.triggered, .repeated, .resolved].contains(transition) {
                    result.events.append(Event(at: .init(millisecondsSince1970: t), rule: rule.name, transition: transition, summary: notification.summary))
                }
            }
            t += stepMs
        }
        return result
    }
}
