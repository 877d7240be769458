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

    /// Whether to keep the request: always for failures, with probability `successRate` otherwise.
    func keep(_ request: TraceEvent.Request) -> Bool {
        guard isSampling else { return true }
        if request.error != nil || (request.status ?? 0) >= 400 || request.status == nil { return true }
        return FastRandom.shared.next() < threshold
    }
}
