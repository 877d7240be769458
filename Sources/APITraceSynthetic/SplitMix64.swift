import Foundation

/// A small, fast, seedable random generator (SplitMix64): same seed, same sequence, on every
/// platform and run, for tests and generated traffic that must repeat.
///
/// ```swift
/// var random = SplitMix64(seed: 42)
/// let delay = random.exponential(mean: 250)       // ms
/// let status = [200, 200, 503].randomElement(using: &random)
/// ```
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Starts the sequence of `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// SplitMix64's finalizer: spreads nearby seeds (1, 2, 3...) into unrelated streams.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Uniform in `0..<n` (0 when `n` is below 1).
    package mutating func int(below n: Int) -> Int { Int(next() % UInt64(max(1, n))) }

    /// Exponentially distributed with `mean` (waiting times between events).
    package mutating func exponential(mean: Double) -> Double { -mean * log(1 - unit()) }

    /// Standard normal (Box-Muller).
    package mutating func normal() -> Double {
        let u1 = max(unit(), 1e-12)
        return sqrt(-2 * log(u1)) * cos(2 * .pi * unit())
    }
}
