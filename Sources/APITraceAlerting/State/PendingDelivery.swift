/// A notification not delivered yet: being delivered by a run (``claimedUntil`` in the future), or
/// failed and waiting for the next run.
public struct PendingDelivery: Sendable, Equatable, Codable {
    /// Identifies this delivery between a run's evaluation and its record of the outcome.
    public var id: String?
    /// Notifier name from the rules file.
    public var notifier: String
    /// What to send (no secrets: they are read from the environment at send time).
    public var notification: AlertNotification
    /// Attempts so far, over all runs.
    public var attempts: Int
    /// The last failure, redacted.
    public var lastError: String
    /// While a run delivers it outside the lock: until when (wall clock, ms since 1970) other runs
    /// leave it alone. A run that died mid-delivery leaves a claim that simply expires.
    public var claimedUntil: Int64?

    /// Creates a pending delivery.
    public init(id: String? = nil, notifier: String, notification: AlertNotification, attempts: Int, lastError: String, claimedUntil: Int64? = nil) {
        self.id = id
        self.notifier = notifier
        self.notification = notification
        self.attempts = attempts
        self.lastError = lastError
        self.claimedUntil = claimedUntil
    }

    /// Whether another run is delivering it at wall-clock time `now`.
    public func isClaimed(at now: Int64) -> Bool { (claimedUntil ?? .min) > now }
}
