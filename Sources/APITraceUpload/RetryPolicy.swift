import APITraceFormat
public import Foundation

/// Exponential backoff with jitter, honouring a server's `Retry-After`.
///
/// The n-th consecutive failure waits a random time between half and all of
/// `min(maximum, initial × 2^(n-1))` ("equal jitter": clients that failed together do not
/// retry together, and none retries at once). A `Retry-After` from the server is a floor:
/// the wait is at least that long (plus up to 10 % jitter), capped at ``maximumRetryAfter``.
public struct RetryPolicy: Sendable, Equatable {
    /// Delay ceiling after the first failure. Default 1 s.
    public var initial: Duration
    /// Largest backoff delay. Default 5 minutes.
    public var maximum: Duration
    /// Longest `Retry-After` honoured. Default 1 hour.
    public var maximumRetryAfter: Duration

    /// Creates a policy with the defaults above.
    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(300), maximumRetryAfter: Duration = .seconds(3600)) {
        self.initial = initial
        self.maximum = maximum
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The wait after `failures` consecutive failures (1 for the first), given the server's `Retry-After`.
    public func delay(afterFailures failures: Int, retryAfter: Duration? = nil) -> Duration {
        var seconds = Backoff(initial: initial, maximum: maximum).delayMilliseconds(retry: max(failures, 1) - 1) / 1000
        if let retryAfter {
            let floor = min(retryAfter.inSeconds, maximumRetryAfter.inSeconds)
            seconds = max(seconds, floor + Double.random(in: 0...(floor * 0.1)))
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Parses a `Retry-After` value with the format module's one parser (seconds, decimals, HTTP
    /// dates; `inf`, negatives and garbage are nil), capped at an hour.
    public static func parseRetryAfter(_ value: String, now: Date = Date()) -> Duration? {
        RetryAfter.parse(value, nowMilliseconds: Int64(now.timeIntervalSince1970 * 1000), cap: .seconds(3600))
    }
}
