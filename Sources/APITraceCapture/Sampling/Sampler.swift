import APITraceFormat

/// Decides per request whether a successful one is kept.
final class Sampler: Sendable {
    let successRate: Double
    let isSampling: Bool
    private let threshold: UInt64

    init(successRate: Double) {
        self.successRate = successRate
        self.isSampling = successRate < 1
        self.threshold = successRate >= 1 ? UInt64.max : UInt64(successRate * 18_446_744_073_709_551_615.0)
    }

    /// Whether to keep the request: always unless its ``RequestOutcome`` is `success`, with
    /// probability `successRate` otherwise; the readers weigh exactly those lines by `sample_rate`.
    func keep(_ request: TraceEvent.Request) -> Bool {
        guard isSampling, Self.isSampled(request) else { return true }
        return FastRandom.shared.next() < threshold
    }

    /// True for the requests sampling applies to: those whose outcome is `success`, the one
    /// outcome a reader scales by `sample_rate` (`RequestWeight`). A status wins over an error
    /// identity there, so a 200 whose body broke off is a success, sampled like the others.
    @inline(__always)
    static func isSampled(_ request: TraceEvent.Request) -> Bool { request.outcome == .success }
}
