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

    /// How long this run may take to deliver `due` at worst: every attempt timing out, every wait at its longest.
    func claimLength(of due: [Delivery]) -> Int64 {
        let sender = options.sender
        let perAttempt = sender.timeout.wholeMilliseconds + sender.maxRetryAfter.wholeMilliseconds + 2_000
        let total = due.reduce(Int64(0)) { sum, d in
            let attempt = max(perAttempt, (d.notifier.timeout?.milliseconds ?? 0) + sender.maxRetryAfter.wholeMilliseconds + 2_000)
            return sum + Int64(d.notifier.maxAttempts + 1) * attempt
        }
        return total + 60_000
    }

    /// Renders and sends one delivery.
    func deliver(_ delivery: Delivery, outcome: inout Outcome) async -> NotificationSender.Outcome {
        let request: NotificationRequest
        do {
            request = try NotificationRequest(delivery.notification, for: delivery.notifier, environment: options.environment, source: options.source)
        } catch {
            outcome.problems.append(error.description)
            outcome.status = .configurationError
            return .failed(attempts: 0, reason: error.description)
        }
        return await options.sender.deliver(request)
    }

    /// `--dry-run`: prints what would be sent, secrets redacted.
    func show(_ delivery: Delivery, outcome: inout Outcome) {
        var environment = options.environment
        let notifier = delivery.notifier
        for variable in [notifier.routingKeyEnvironmentVariable, notifier.urlEnvironmentVariable].compactMap({ $0 }) where (environment[variable] ?? "").isEmpty {
            environment[variable] = "https://unset.invalid/"
        }
        do {
            let request = try NotificationRequest(delivery.notification, for: notifier, environment: environment, source: options.source)
            outcome.lines.append("  would send to \(notifier.name) (\(notifier.kind.rawValue), \(request.displayDestination)):")
            outcome.lines.append("  " + String(decoding: request.redactedBody, as: UTF8.self))
        } catch {
            outcome.problems.append(error.description)
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
        case .failed(let attempts, let reason), .rejected(let attempts, let reason):
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
