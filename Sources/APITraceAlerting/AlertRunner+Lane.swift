extension AlertRunner {
    /// One incident's notifications to one notifier, delivered in order: once one fails, the later
    /// ones (but Alertmanager re-sends) wait for the next run, so a resolve never overtakes its trigger.
    enum Lane {
        struct Item: Sendable {
            /// Position in the run's list of deliveries.
            var index: Int
            var delivery: Delivery
            /// The rendered request, or why the notifier cannot be used (scrubbed).
            var request: NotificationRequest?
            var unusable: String?
        }

        /// Delivers a lane's items until `deadline`.
        static func deliver(_ lane: [Item], sender: NotificationSender, until deadline: ContinuousClock.Instant,
                            budget: Duration) async -> [(Int, NotificationSender.Outcome)] {
            var out: [(Int, NotificationSender.Outcome)] = []
            var blocked = false
            for item in lane {
                let delivery = item.delivery
                let result: NotificationSender.Outcome
                if blocked, !delivery.isRefresh {
                    result = .failed(attempts: 0, reason: "an earlier notification of this incident to \(delivery.notifier.name) is not delivered yet; sent after it")
                } else if let request = item.request {
                    result = ContinuousClock.now >= deadline
                        ? .failed(attempts: 0, reason: "not sent: the run's delivery budget (\(budget)) ran out")
                        : await sender.deliver(request, until: deadline)
                } else {
                    result = .failed(attempts: 0, reason: item.unusable ?? "the notifier cannot be used")
                }
                if case .delivered = result {} else if !delivery.isRefresh { blocked = true }
                out.append((item.index, result))
            }
            return out
        }
    }
}
