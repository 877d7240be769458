import APITraceFormat
import Synchronization

/// Decides per request whether a successful one is kept, with a lock-free generator
/// (the system generator costs a system call per number on Linux).
final class Sampler: Sendable {
    let successRate: Double
    let isSampling: Bool
    private let threshold: UInt64
    private let state = Atomic<UInt64>(UInt64.random(in: 0...UInt64.max))

    init(successRate: Double) {
        self.successRate = successRate
        self.isSampling = successRate < 1
        self.threshold = successRate >= 1 ? UInt64.max : UInt64(successRate * 18_446_744_073_709_551_615.0)
    }

    /// Whether to keep the request: always for failures, with probability `successRate` otherwise.
    func keep(_ request: TraceEvent.Request) -> Bool {
        guard isSampling else { return true }
        if request.error != nil || (request.status ?? 0) >= 400 || request.status == nil { return true }
        return next() < threshold
    }

    /// SplitMix64 over an atomic counter: every caller gets a distinct, well-mixed value.
    private func next() -> UInt64 {
        var z = state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
