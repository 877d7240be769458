import APITraceFormat

/// A SplitMix64 generator shared by threads, for sampling decisions and trace ids.
/// Not for secrets; the system generator costs a system call per number on Linux.
package final class FastRandom: Sendable {
    package static let shared = FastRandom()

    private static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    private let state = Locked<UInt64>(UInt64.random(in: 0...UInt64.max))

    package func next() -> UInt64 {
        let z = state.withLock { state in
            state &+= Self.gamma
            return state
        }
        return Self.mix(z)
    }

    /// Three numbers for one lock: a trace id (two) and a span id.
    package func nextThree() -> (UInt64, UInt64, UInt64) {
        let z = state.withLock { state in
            defer { state &+= 3 &* Self.gamma }
            return state
        }
        return (Self.mix(z &+ Self.gamma), Self.mix(z &+ 2 &* Self.gamma), Self.mix(z &+ 3 &* Self.gamma))
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
