/// Which successful requests a ``APITracer`` keeps. Failed requests (status 400 and up, or a transport
/// error) are always kept.
///
/// Kept successful requests carry `sample_rate`, so a reader scales their counts by `1 / rate`.
///
/// ```swift
/// configuration.sampling = Sampling(successRate: 0.05)   // keep 1 in 20 successful requests
/// ```
public struct Sampling: Sendable, Equatable {
    /// Share of successful requests kept, from 0 to 1. Default 1: keep all, no `sample_rate` field.
    public var successRate: Double

    /// Creates a sampling policy; `successRate` is clamped to 0...1.
    public init(successRate: Double = 1) {
        self.successRate = min(1, max(0, successRate.isNaN ? 1 : successRate))
    }
}
