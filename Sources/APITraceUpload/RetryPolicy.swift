import Foundation

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
        let initialSeconds = Self.seconds(initial)
        let ceiling = min(Self.seconds(maximum), initialSeconds * pow(2, Double(min(max(failures, 1) - 1, 40))))
        var seconds = Double.random(in: (ceiling / 2)...max(ceiling / 2, ceiling))
        if let retryAfter {
            let floor = min(Self.seconds(retryAfter), Self.seconds(maximumRetryAfter))
            seconds = max(seconds, floor + Double.random(in: 0...(floor * 0.1)))
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Parses a `Retry-After` value: seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
    public static func parseRetryAfter(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return seconds >= 0 ? .seconds(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return .milliseconds(Int64(max(0, date.timeIntervalSince(now)) * 1000))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
