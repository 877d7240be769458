import APITraceFormat
/// When an ``EventSource`` reconnects: exponential backoff with "equal jitter", a floor, a cap, and a
/// reset once a connection stayed healthy.
///
/// The delay before the n-th consecutive reconnect (n from 0) is drawn from `d/2 ... d` where
/// `d = min(maximumDelay, base * 2^n)` and `base` is the server's `retry` when it sent one, else
/// ``initialDelay``; neither `base` nor the delay is ever below ``minimumDelay``, whatever `retry`
/// says, so `retry: 0` cannot start a reconnect storm: consecutive short-lived connections wait
/// 0.5 s, 0.5-1 s, 1-2 s, ... The defaults follow launchdarkly/swift-eventsource: 1 s, cap 30 s, reset
/// after 60 s.
///
/// ```swift
/// var policy = ReconnectPolicy()
/// policy.maximumDelay = .seconds(10)
/// ```
public struct ReconnectPolicy: Sendable {
    /// Base delay until the server sends `retry`. Default 1 s.
    public var initialDelay: Duration
    /// Shortest delay, whatever the server's `retry` says. Default 0.5 s.
    ///
    /// It is the client's own protection against a server (or a proxy) that asks for instant
    /// reconnects; lower it only in tests.
    public var minimumDelay: Duration
    /// Longest delay, jitter included. Default 30 s; a ``minimumDelay`` above it wins.
    public var maximumDelay: Duration
    /// A connection that stayed open this long resets the backoff to the base delay. Default 60 s.
    public var resetAfter: Duration
    /// Draws a number in the given range; replaceable to make delays reproducible.
    public var random: @Sendable (ClosedRange<Double>) -> Double

    /// Creates a policy with the defaults above.
    public init(
        initialDelay: Duration = .seconds(1),
        minimumDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(30),
        resetAfter: Duration = .seconds(60),
        random: @escaping @Sendable (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) {
        self.initialDelay = initialDelay
        self.minimumDelay = minimumDelay
        self.maximumDelay = maximumDelay
        self.resetAfter = resetAfter
        self.random = random
    }

    /// The upper bound `d`, in milliseconds, of the delay before reconnect number `retry` (0 for the first
    /// after a healthy connection), given the server's `retry` in milliseconds if any. The delay lies in `d/2 ... d`.
    public func delayCeilingMilliseconds(retry: Int, serverRetryMilliseconds: Int?) -> Double {
        max(floor, backoff.ceilingMilliseconds(retry: retry, base: base(serverRetryMilliseconds)))
    }

    /// The delay in milliseconds before reconnect number `retry`: `d/2` plus a random part up to `d/2`,
    /// and never less than ``minimumDelay``.
    public func delayMilliseconds(retry: Int, serverRetryMilliseconds: Int?) -> Double {
        max(floor, backoff.delayMilliseconds(retry: retry, base: base(serverRetryMilliseconds), random: random))
    }

    private var floor: Double { max(0, minimumDelay.inMilliseconds) }

    private func base(_ serverRetryMilliseconds: Int?) -> Double {
        max(floor, serverRetryMilliseconds.map(Double.init) ?? initialDelay.inMilliseconds)
    }

    private var backoff: Backoff { Backoff(initial: initialDelay, maximum: maximumDelay) }
}
