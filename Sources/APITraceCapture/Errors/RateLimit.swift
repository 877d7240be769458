/// How many `error` events of one identity a ``APITracer`` writes per window.
///
/// Errors past the limit are not lost silently: their count is written as `suppressed` on the next
/// `error` event of that identity, and ``APITracer/flush()`` writes any count still pending as a
/// `dropped` event with reason `rate_limited`. So the number of errors that happened is the number
/// of `error` events plus the sum of `suppressed` plus the `rate_limited` drops.
public struct RateLimit: Sendable, Equatable {
    /// Most events written per identity in one window.
    public var maxEvents: Int
    /// Length of the window.
    public var window: Duration

    /// Creates a limit of `maxEvents` per `window`.
    public init(maxEvents: Int, per window: Duration) {
        self.maxEvents = max(1, maxEvents)
        self.window = window
    }
}
