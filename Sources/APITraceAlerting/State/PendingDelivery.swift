/// A notification not delivered yet: being delivered by a run (``claimedUntil`` in the future), or
/// failed and waiting for the next run.
package struct PendingDelivery: Sendable, Equatable, Codable {
    /// Identifies this delivery between a run's evaluation and its record of the outcome.
    package var id: String?
    /// Notifier name from the rules file.
    package var notifier: String
    /// What to send (no secrets: they are read from the environment at send time).
    package var notification: AlertNotification
    /// Attempts so far, over all runs.
    package var attempts: Int
    /// The last failure, redacted.
    package var lastError: String
    /// While a run delivers it outside the lock: until when (wall clock, ms since 1970) other runs
    /// leave it alone. A run that died mid-delivery leaves a claim that simply expires.
    package var claimedUntil: Int64?

    /// Creates a pending delivery.
    package init(id: String? = nil, notifier: String, notification: AlertNotification, attempts: Int, lastError: String, claimedUntil: Int64? = nil) {
        self.id = id
        self.notifier = notifier
        self.notification = notification
        self.attempts = attempts
        self.lastError = lastError
        self.claimedUntil = claimedUntil
    }

    /// Whether another run is delivering it at wall-clock time `now`.
    package func isClaimed(at now: Int64) -> Bool { (claimedUntil ?? .min) > now }
}
