import APITraceFormat

/// When a ``WebSocketConnection`` reconnects: which close codes it retries, and after how long.
///
/// Delays come from the project's one backoff (exponential, "equal jitter", a cap), never below
/// ``minimumDelay``. The client reconnects after abnormal ends (1006: a drop, a network error, a
/// peer that stopped answering pings; 1011-1014) and after 1001 (going away); it stops on 1000 unless
/// ``reconnectOnNormalClosure`` is set, and on policy codes (1008, 4000-4999) and protocol errors.
///
/// ```swift
/// var policy = WebSocketReconnectPolicy()
/// policy.maximumDelay = .seconds(10)
/// policy.reconnectOnNormalClosure = true   // a feed that should always be up
/// ```
public struct WebSocketReconnectPolicy: Sendable {
    /// Ceiling of the first delay. Default 1 s.
    public var initialDelay: Duration
    /// Longest delay, jitter included. Default 30 s.
    public var maximumDelay: Duration
    /// Shortest delay, whatever the jitter draws. Default 250 ms.
    public var minimumDelay: Duration
    /// A connection that stayed open this long resets the backoff. Default 60 s.
    public var resetAfter: Duration
    /// Attempts in a row that fail to open before the client gives up (``WebSocketError/Code/refused``);
    /// `nil` never gives up. Default 10.
    public var maximumFailedAttempts: Int?
    /// Reconnect after a normal closure (1000) too. Default `false`.
    public var reconnectOnNormalClosure: Bool
    /// Close codes after which the client reconnects. Default 1001, 1006, 1011, 1012, 1013, 1014.
    public var reconnectCodes: Set<Int>
    /// Draws a number in the given range; replaceable to make delays reproducible.
    public var random: @Sendable (ClosedRange<Double>) -> Double

    /// Creates a policy with the defaults above.
    public init(
        initialDelay: Duration = .seconds(1),
        maximumDelay: Duration = .seconds(30),
        minimumDelay: Duration = .milliseconds(250),
        resetAfter: Duration = .seconds(60),
        maximumFailedAttempts: Int? = 10,
        reconnectOnNormalClosure: Bool = false,
        reconnectCodes: Set<Int> = [1001, 1006, 1011, 1012, 1013, 1014],
        random: @escaping @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.minimumDelay = minimumDelay
        self.resetAfter = resetAfter
        self.maximumFailedAttempts = maximumFailedAttempts
        self.reconnectOnNormalClosure = reconnectOnNormalClosure
        self.reconnectCodes = reconnectCodes
        self.random = random
    }

    /// Whether a connection that ended with `code` is retried.
    public func reconnects(afterCode code: Int) -> Bool {
        code == 1000 ? reconnectOnNormalClosure : reconnectCodes.contains(code)
    }

    /// The delay in milliseconds before reconnect number `retry` (0 for the first after a healthy
    /// connection): the backoff's `d/2 + random(0...d/2)`, at least ``minimumDelay``, at most ``maximumDelay``.
    public func delayMilliseconds(retry: Int) -> Double {
        let drawn = Backoff(initial: initialDelay, maximum: maximumDelay).delayMilliseconds(retry: retry, random: random)
        return min(max(drawn, minimumDelay.inMilliseconds), max(maximumDelay.inMilliseconds, minimumDelay.inMilliseconds))
    }
}
