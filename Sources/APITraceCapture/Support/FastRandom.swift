import APITraceFormat

/// A SplitMix64 generator shared by threads, for sampling decisions and trace ids.
/// Not for secrets; the system generator costs a system call per number on Linux.
final class FastRandom: Sendable {
    static let shared = FastRandom()

    private let state = Locked<UInt64>(UInt64.random(in: 0...UInt64.max))

    func next() -> UInt64 {
        var z = state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            return state
        }
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
