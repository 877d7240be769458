package import APITraceFormat

/// Replays the rules over past traces: evaluates every `step` from `since` to `until` with a
/// fresh state (no mutes) and reports when they would have paged and resolved, so people can
/// tune thresholds before going live.
///
/// ```swift
/// let result = Backtest(rules: rules, since: start, until: end).run(paths: ["traces"])
/// for event in result.events { print(event.line) }
/// ```
package struct Backtest: Sendable {
    /// The rules.
    package var rules: AlertRules
    /// First evaluated instant.
    package var since: TraceTimestamp
    /// Last evaluated instant.
    package var until: TraceTimestamp
    /// Time between evaluations, as a cron run every minute would.
    package var step: AlertDuration

    /// Creates a backtest.
    package init(rules: AlertRules, since: TraceTimestamp, until: TraceTimestamp, step: AlertDuration = .minutes(1)) {
        self.rules = rules
        self.since = since
        self.until = until
        self.step = step
    }

    /// A page or a resolution the rules would have sent.
    package struct Event: Sendable, Equatable {
        /// When.
        package var at: TraceTimestamp
        /// Which rule.
        package var rule: String
        /// `triggered`, `repeated` or `resolved`.
        package var transition: IncidentTracker.Transition
        /// The notification's summary.
        package var summary: String
        /// For a grouped rule, the group (nil: the rule as a whole, or its summary page).
        package var group: AlertGroup?

        /// One printable line.
        package var line: String { "\(at.rfc3339) \(transition == .resolved ? "RESOLVE" : transition == .repeated ? "REPEAT " : "PAGE   ") \(summary)" }
    }

    /// What a backtest found.
    package struct Result: Sendable {
        /// Pages and resolutions in time order.
        package var events: [Event] = []
        /// Per rule: evaluations that fired.
        package var firingEvaluations: [String: Int] = [:]
        /// Evaluations per rule.
        package var evaluations = 0
        /// Files opened.
        package var filesOpened = 0
        /// Reading problems.
        package var warnings: [TraceReadWarning] = []
        /// Grouped rules whose groups went past `max_groups`, one sentence each.
        package var groupNotes: [String] = []

        /// What one rule did over the backtest.
        package struct RuleTally: Sendable, Equatable {
            /// Incidents opened (first pages).
            package var incidents = 0
            /// Pages sent: first pages and repeats.
            package var pages = 0
            /// Evaluations in which the rule fired.
            package var firingEvaluations = 0
        }

        /// The tally of the rule named `rule` (all its groups and summary pages).
        package func tally(rule: String) -> RuleTally {
            tally(events.filter { $0.rule == rule }, firing: firingEvaluations[rule] ?? 0)
        }

        /// The groups of `rule` that had incidents, by label.
        package func groups(rule: String) -> [AlertGroup] {
            Array(Set(events.filter { $0.rule == rule }.compactMap(\.group))).sorted { $0.label < $1.label }
        }

        /// One printable line per group of a grouped rule that had incidents, and one for its
        /// summary pages: `api-errors route=/profile: 1 incident, 1 page`.
        package func groupLines(rule: String) -> [String] {
            let mine = events.filter { $0.rule == rule }
            guard mine.contains(where: { $0.group != nil }) || firingEvaluations["\(rule) (summary)"] != nil else { return [] }
            var lines = groups(rule: rule).map { g in
                let t = tally(mine.filter { $0.group == g }, firing: firingEvaluations["\(rule)[\(g.label)]"] ?? 0)
                return "  \(rule) \(AlertEvidence.cut(g.label, 200)): \(Self.plural(t.incidents, "incident")), \(Self.plural(t.pages, "page")), firing in \(t.firingEvaluations) evaluations"
            }
            let summary = tally(mine.filter { $0.group == nil }, firing: firingEvaluations["\(rule) (summary)"] ?? 0)
            lines.append("  \(rule) summary of many groups firing together: \(Self.plural(summary.incidents, "incident")), \(Self.plural(summary.pages, "page"))")
            return lines
        }

        private static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

        private func tally(_ mine: [Event], firing: Int) -> RuleTally {
            return RuleTally(
                incidents: mine.filter { $0.transition == .triggered }.count, pages: mine.filter { $0.transition != .resolved }.count,
                firingEvaluations: firing)
        }

        /// One printable line of a rule's tally: `api-errors: 1 incident, 1 page, firing in 10 of 101 evaluations (7 files read)`.
        package func summaryLine(rule: String) -> String {
            let t = tally(rule: rule)
            func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
            return "\(rule): \(plural(t.incidents, "incident")), \(plural(t.pages, "page")), firing in \(t.firingEvaluations) of \(evaluations) evaluations (\(filesOpened) files read)"
        }
    }

    /// Evaluated instants are replayed in passes of at most this span (a fortnight): each pass
    /// counts only the buckets its evaluations read (its span plus the rules' longest window), so
    /// memory follows the pass, not the span of the backtest or the timestamps a file holds.
    package static let passMilliseconds: Int64 = 14 * 86_400_000

    /// Counts the traces under `paths`, a pass at a time, and replays the evaluations.
    ///
    /// Time whose evaluations read no trace file (none is selected for their ranges), while no
    /// incident is open, cannot page or resolve: it is leapt over, its evaluations counted without
    /// being run; so is a pass whose counted ranges hold no event when no rule looks for new
    /// failures (those read the files at every step). A backtest over decades of mostly empty
    /// time ends as soon as one over its busy weeks.
    package func run(paths: [String]) -> Result {
        run(paths: paths, passMilliseconds: Self.passMilliseconds)
    }

    /// ``run(paths:)`` with passes of `passMilliseconds` (tests compare short passes with one pass).
    package func run(paths: [String], passMilliseconds: Int64) -> Result {
        let first = since.millisecondsSince1970, last = until.millisecondsSince1970
        let found = TraceFileDiscovery.find(paths)
        var result = Result(warnings: found.warnings)
        var warned = Set(found.warnings.map(\.description))
        var opened = Set<String>()
        var overflowed = Set<String>()
        var state = AlertState()
        // New-failure rules read their baseline at each step: finished files are summarized once.
        let groupCache = FileCountCache()
        let readsFilesItself = rules.rules.contains { $0.newFailures != nil }
        let stepMs = max(step.milliseconds, 1000)
        let stepsPerPass = max(1, passMilliseconds / stepMs)
        // The last instant of `steps` evaluations from `t`, or the last of the backtest.
        func end(from t: Int64, steps: Int64) -> Int64 {
            (last - t) / stepMs >= steps - 1 ? t + (steps - 1) * stepMs : last - (last - t) % stepMs
        }
        var t = first
        while t <= last {
            if state.incidents.isEmpty {
                // Leap over time no file can hold events of (for the counts, and for what new-failure
                // rules read at each step), doubling the leap while it stays empty.
                var steps = stepsPerPass
                var quietUntil: Int64?
                while true {
                    let far = end(from: t, steps: steps)
                    guard TraceFileSelection.plan(found.files, overlapping: readRanges(from: t, to: far)).isEmpty else { break }
                    quietUntil = far
                    if far == end(from: t, steps: .max / 2) || steps > .max / 4 { break }
                    steps *= 2
                }
                if let quietUntil {
                    result.evaluations += Int((quietUntil - t) / stepMs) + 1
                    t = quietUntil + stepMs
                    continue
                }
            }
            let passLast = end(from: t, steps: stepsPerPass)
            let ranges = rules.rules.flatMap { $0.countedRanges(from: t, to: passLast) }
            let counter = WindowedFailureCounter(rules: rules.rules, ranges: ranges)
            opened.formUnion(TraceFileSelection.plan(found.files, overlapping: ranges).map(\.path))
            let counted = counter.count(files: found.files)
            for warning in counted.warnings where warned.insert(warning.description).inserted { result.warnings.append(warning) }
            for (i, rule) in rules.rules.enumerated() where counted.groupsOverflowed[i] && overflowed.insert(rule.name).inserted {
                result.groupNotes.append("rule \(rule.name) saw more than max_groups \(rule.maxGroups) groups; the rest were counted and evaluated together as \(AlertGroup.otherLabel)")
            }
            let instants = Int((passLast - t) / stepMs) + 1
            let span = (ranges.map(\.lowerBound).min() ?? t)..<(ranges.map(\.upperBound).max() ?? t)
            let quiet = counted.counts.allSatisfy { let totals = $0.totals(in: span); return totals.requests == 0 && totals.failures == 0 }
            if quiet && state.incidents.isEmpty && !readsFilesItself {
                result.evaluations += instants
            } else {
                replay(from: t, to: passLast, step: stepMs, counts: counted.counts, groups: counted.groups, paths: paths, state: &state, cache: groupCache, into: &result)
            }
            t = passLast + stepMs
        }
        result.filesOpened = opened.count
        return result
    }

    /// Every time range evaluations from `first` to `last` read: the counted ranges, and the
    /// baseline and window a new-failure rule scans at each step.
    private func readRanges(from first: Int64, to last: Int64) -> [Range<Int64>] {
        rules.rules.flatMap { rule in
            var ranges = rule.countedRanges(from: first, to: last)
            if let newFailures = rule.newFailures {
                ranges.append((first - newFailures.window.milliseconds - newFailures.baseline.milliseconds)..<(last + 1))
            }
            return ranges
        }
    }

    /// Evaluates the rules at every step from `first` to `last` over one pass's counts.
    private func replay(
        from first: Int64, to last: Int64, step stepMs: Int64, counts: [FailureCounts], groups: [[AlertGroup: FailureCounts]], paths: [String],
        state: inout AlertState, cache: FileCountCache, into result: inout Result
    ) {
        var t = first
        while t <= last {
            result.evaluations += 1
            for (i, rule) in rules.rules.enumerated() {
                let (detection, _) = NewFailureDetector.evaluate(rule, RuleDetector.evaluate(rule, counts: counts[i], at: t), paths: paths, at: t, cache: cache)
                let evaluations = GroupedDetection.evaluate(rule, detection: detection, total: counts[i], groups: i < groups.count ? groups[i] : [:], state: state, at: t)
                if evaluations.contains(where: \.detection.firing) { result.firingEvaluations[rule.name, default: 0] += 1 }
                for e in evaluations {
                    let key = e.subject.group == nil ? (rule.groupBy.isEmpty ? rule.name : "\(rule.name) (summary)") : e.subject.stateKey(rule: rule.name)
                    if !rule.groupBy.isEmpty, e.detection.firing { result.firingEvaluations[key, default: 0] += 1 }
                    let (transition, notification) = IncidentTracker.advance(
                        &state, rule: rule, detection: e.detection, subject: e.subject,
                        evidence: { AlertEvidence(rule: rule, detection: e.detection, tally: EvidenceTally(), traceDirectory: paths.first ?? ".", subject: e.subject) }, at: t)
                    if let notification, [.triggered, .repeated, .resolved].contains(transition) {
                        result.events.append(Event(
                            at: .init(millisecondsSince1970: t), rule: rule.name, transition: transition, summary: notification.summary, group: e.subject.group))
                    }
                }
            }
            t += stepMs
        }
    }
}
