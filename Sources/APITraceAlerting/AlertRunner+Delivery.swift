import APITraceFormat
import Foundation

/// The delivery half of a run: what was claimed under the lock is sent without it, and the
/// outcome is recorded under the lock again. An incident counts as paged only once a notifier
/// accepted its trigger; a delivery that failed, or that a service refused, stays in the state's
/// `pending` and is tried again on the next run.
extension AlertRunner {
    /// One notification for one notifier, claimed by this run.
    struct Delivery: Sendable {
        /// The id of its entry in the state's `pending` (none for Alertmanager re-sends, which are not kept).
        var id: String = UUID().uuidString
        var notifier: NotifierConfiguration
        var notification: AlertNotification
        /// Attempts made by earlier runs.
        var previousAttempts = 0
        /// An Alertmanager re-send of a firing alert: the next run sends a fresh one, so a failure is not kept.
        var isRefresh = false

        /// Deliveries with the same key go out in order: one incident to one notifier.
        var orderKey: String { Self.orderKey(notifier.name, notification.incidentID) }
        static func orderKey(_ notifier: String, _ incident: String) -> String { notifier + "\u{1}" + incident }
        static func orderKey(_ pending: PendingDelivery) -> String { orderKey(pending.notifier, pending.notification.incidentID) }
    }

    /// Now on this machine's clock (ms since 1970): claims must outlast real deliveries, whatever `--now` says.
    static func wallClock() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// How long this run may hold its claims at worst: until the delivery deadline, plus the time
    /// to take the lock again and record the outcome.
    func claimLength(until deadline: ContinuousClock.Instant) -> Int64 {
        max(0, (deadline - .now).wholeMilliseconds) + options.lockTimeout.wholeMilliseconds + 10_000
    }

    /// When deliveries must be over: the run's budget from its start, but never less than a fifth of
    /// the budget from now (a run that spent its budget counting still gets a short try).
    func deliveryDeadline(runStarted: ContinuousClock.Instant) -> ContinuousClock.Instant {
        max(runStarted.advanced(by: options.budget), ContinuousClock.now.advanced(by: options.budget / 5))
    }

    /// Sends every claimed delivery before `deadline`: notifiers at the same time, each incident's
    /// notifications to one notifier in order. What does not finish in time is a failure kept for the next run.
    func deliverAll(_ due: [Delivery], until deadline: ContinuousClock.Instant, outcome: inout Outcome) async -> [(Delivery, NotificationSender.Outcome)] {
        var lanes: [String: [Lane.Item]] = [:]
        var laneOrder: [String] = []
        // A command's child gets `APITRACE_*` variables, but never one that holds a notifier's secret.
        let secretVariables = Set(rules.notifiers.values.flatMap { [$0.urlEnvironmentVariable, $0.routingKeyEnvironmentVariable].compactMap { $0 } })
        for (index, delivery) in due.enumerated() {
            var item = Lane.Item(index: index, delivery: delivery)
            do {
                var request = try NotificationRequest(delivery.notification, for: delivery.notifier, environment: options.environment, source: options.source)
                request.commandEnvironment = request.commandEnvironment.filter { !secretVariables.contains($0.key) }
                item.request = request
            } catch {
                // Still goes through its lane: the notifications after it must wait for it.
                item.unusable = SecretScrubber(notifier: delivery.notifier, environment: options.environment).scrub(error.description)
                outcome.problems.append(item.unusable!)
                outcome.status = .configurationError
            }
            if lanes[delivery.orderKey] == nil { laneOrder.append(delivery.orderKey) }
            lanes[delivery.orderKey, default: []].append(item)
        }
        let sender = options.sender
        let budget = options.budget
        // Lanes of one notifier share a few connections at a time (a hanging webhook with a hundred
        // pending pages holds at most that many), and notifiers never wait for one another.
        var byNotifier: [String: [[Lane.Item]]] = [:]
        var notifierOrder: [String] = []
        for key in laneOrder {
            let lane = lanes[key]!
            let name = lane[0].delivery.notifier.name
            if byNotifier[name] == nil { notifierOrder.append(name) }
            byNotifier[name, default: []].append(lane)
        }
        let width = Self.lanesPerNotifier
        let sent = await withTaskGroup(of: [(Int, NotificationSender.Outcome)].self) { group in
            for name in notifierOrder {
                let notifierLanes = byNotifier[name]!
                group.addTask {
                    await withTaskGroup(of: [(Int, NotificationSender.Outcome)].self) { inner in
                        var next = 0
                        var all: [(Int, NotificationSender.Outcome)] = []
                        func start() {
                            let lane = notifierLanes[next]
                            next += 1
                            inner.addTask { await Lane.deliver(lane, sender: sender, until: deadline, budget: budget) }
                        }
                        while next < min(width, notifierLanes.count) { start() }
                        for await part in inner {
                            all += part
                            if next < notifierLanes.count { start() }
                        }
                        return all
                    }
                }
            }
            var all: [(Int, NotificationSender.Outcome)] = []
            for await part in group { all += part }
            return all
        }
        return sent.sorted { $0.0 < $1.0 }.map { (due[$0.0], $0.1) }
    }

    /// How many of one notifier's incidents are delivered at the same time.
    static var lanesPerNotifier: Int { 4 }

    /// `--dry-run`: prints what would be sent, secrets redacted.
    func show(_ delivery: Delivery, outcome: inout Outcome) {
        var environment = options.environment
        let notifier = delivery.notifier
        for variable in [notifier.routingKeyEnvironmentVariable, notifier.urlEnvironmentVariable].compactMap({ $0 }) where (environment[variable] ?? "").isEmpty {
            environment[variable] = "https://unset.invalid/"
        }
        do {
            let request = try NotificationRequest(delivery.notification, for: notifier, environment: environment, source: options.source)
            let scrubber = SecretScrubber(notifier: notifier, environment: options.environment)
            outcome.lines.append(scrubber.scrub("  would send to \(notifier.name) (\(notifier.kind.rawValue), \(request.displayDestination)):"))
            outcome.lines.append("  " + scrubber.scrub(String(decoding: request.redactedBody, as: UTF8.self)))
        } catch {
            outcome.problems.append(SecretScrubber(notifier: notifier, environment: options.environment).scrub(error.description))
            outcome.status = .configurationError
        }
    }

    /// Records one delivery's outcome in the state as it is now (another run may have changed it meanwhile).
    func record(_ result: NotificationSender.Outcome, of delivery: Delivery, in state: inout AlertState, outcome: inout Outcome) {
        let notifier = delivery.notifier
        let n = delivery.notification
        let index = state.pending.firstIndex { $0.id == delivery.id }
        switch result {
        case .delivered(let attempts):
            if let index { state.pending.remove(at: index) }
            if n.action == .trigger, !delivery.isRefresh { markPaged(n, in: &state) }
            if !delivery.isRefresh || options.verbose {
                let what = delivery.isRefresh ? "re-sent the firing alert" : "delivered"
                outcome.lines.append("  -> \(notifier.name) (\(notifier.kind.rawValue)): \(what)\(attempts > 1 ? " after \(attempts) attempts" : "")")
            }
        case .failed(let attempts, var reason), .rejected(let attempts, var reason):
            // Already scrubbed by the sender; once more here, so no path into the state or stderr skips it.
            reason = SecretScrubber(notifier: notifier, environment: options.environment).scrub(reason)
            if outcome.status == .ok { outcome.status = .deliveryFailed }
            var advice = "kept for the next run"
            if case .rejected = result { advice += "; check the notifier's key, URL or payload" }
            if delivery.isRefresh {
                outcome.problems.append("\(notifier.name): re-sending the firing alert of \(n.rule) failed (\(reason)); the next run sends it again")
                return
            }
            outcome.problems.append("\(notifier.name): delivery of \(n.action.rawValue) for \(n.rule) failed (\(reason)); \(advice)")
            let entry = PendingDelivery(id: delivery.id, notifier: notifier.name, notification: n,
                                        attempts: delivery.previousAttempts + attempts, lastError: reason, claimedUntil: nil)
            if let index { state.pending[index] = entry } else { state.pending.append(entry) }
        }
    }

    /// The incident of a delivered trigger is paged: once per trigger, however many notifiers took it.
    private func markPaged(_ n: AlertNotification, in state: inout AlertState) {
        guard let at = TraceTimestamp(rfc3339: n.timestamp)?.millisecondsSince1970 else { return }
        func mark(_ incident: inout Incident) {
            guard incident.id == n.incidentID, (incident.lastPaged ?? .min) < at else { return }
            incident.lastPaged = at
            incident.pages += 1
        }
        if var open = state.incidents[n.rule], open.id == n.incidentID {
            mark(&open)
            state.incidents[n.rule] = open
        } else if let i = state.closed.lastIndex(where: { $0.id == n.incidentID }) {
            mark(&state.closed[i])
        }
    }

    /// The most undelivered notifications kept; beyond it the oldest are dropped, each with a message.
    static var pendingLimit: Int { 200 }

    func capPending(_ state: inout AlertState, outcome: inout Outcome) {
        let excess = state.pending.count - Self.pendingLimit
        guard excess > 0 else { return }
        for item in state.pending.prefix(excess) {
            outcome.problems.append("dropped the undelivered \(item.notification.action.rawValue) of \(item.notification.rule) (\(item.notification.incidentID)) to \(item.notifier) after \(item.attempts) attempts: more than \(Self.pendingLimit) deliveries are waiting")
        }
        state.pending.removeFirst(excess)
    }
}
