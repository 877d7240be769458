/// The one retry backoff of the project's modules: exponential with "equal jitter" and a cap.
///
/// The delay before retry `n` (0 for the first) is drawn from `d/2 ... d` where
/// `d = min(maximum, base × 2^n)`: clients that failed together do not retry together, and none
/// retries at once. The SSE reconnect policy, the uploader's retry policy and the notifiers'
/// retries are built on it.
///
/// ```swift
/// let backoff = Backoff(initial: .seconds(1), maximum: .seconds(30))
/// backoff.delayMilliseconds(retry: 3)   // between 4,000 and 8,000
/// ```
package struct Backoff: Sendable, Equatable {
    /// The ceiling of the first delay, unless a `base` is given per call.
    package var initial: Duration
    /// The largest ceiling.
    package var maximum: Duration

    package init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The ceiling `d` in milliseconds before retry `retry`, from `base` milliseconds (default ``initial``).
    package func ceilingMilliseconds(retry: Int, base: Double? = nil) -> Double {
        let start = max(0, base ?? initial.inMilliseconds)
        let exponential = start * Double(sign: .plus, exponent: min(max(retry, 0), 62), significand: 1)
        return min(maximum.inMilliseconds, exponential)
    }

    /// The delay in milliseconds before retry `retry`: `d/2` plus `random(0...d/2)`.
    package func delayMilliseconds(
        retry: Int, base: Double? = nil, random: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }
    ) -> Double {
        let half = ceilingMilliseconds(retry: retry, base: base) / 2
        return half + random(0...half)
    }
}
