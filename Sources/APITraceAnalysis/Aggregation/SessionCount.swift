import Foundation

/// Distinct sessions, mergeable across files: exact up to ``exactLimit`` sessions, then a
/// HyperLogLog sketch of 2^12 registers (standard error 1.04/√4096 ≈ 1.6 %; 99 % of estimates
/// within ±5 %). Memory is bounded: at most ``exactLimit`` hashes or 4 KB of registers.
///
/// Sessions are identified by a 64-bit hash of the `session` text (``hash(_:)``), stable across
/// runs and machines, so "exact" means exact up to a 64-bit hash collision (odds about n²/2^65).
///
/// ```swift
/// var sessions = SessionCount()
/// sessions.insert(SessionCount.hash("s-1"))
/// sessions.count // 1
/// ```
public struct SessionCount: Sendable, Equatable {
    /// Distinct sessions counted exactly; past it the count becomes an estimate.
    public static let exactLimit = 1024
    /// log2 of the number of HyperLogLog registers.
    static let precision = 12
    /// Largest register value the sketch can hold (rank of a hash).
    static let maximumRank = UInt8(64 - precision + 1)
    /// The documented relative standard error of the estimate.
    public static let standardError = 1.04 / Double(1 << precision).squareRoot()

    var exact: Set<UInt64> = []
    var registers: [UInt8]?

    /// Creates an empty count.
    public init() {}

    /// True while ``count`` is exact.
    public var isExact: Bool { registers == nil }

    /// Distinct sessions: exact while ``isExact``, otherwise the HyperLogLog estimate, rounded.
    public var count: Int {
        guard let registers else { return exact.count }
        return Int(Self.estimate(registers).rounded())
    }

    /// Adds a session by its hash.
    @inline(__always)
    package mutating func insert(_ hash: UInt64) {
        if registers == nil {
            exact.insert(hash)
            if exact.count > Self.exactLimit { switchToSketch() }
        } else {
            Self.add(hash, to: &registers!)
        }
    }

    /// Adds every session of another count.
    public mutating func merge(_ other: SessionCount) {
        if let theirs = other.registers {
            if registers == nil { switchToSketch() }
            for i in theirs.indices where theirs[i] > registers![i] { registers![i] = theirs[i] }
        } else {
            for hash in other.exact { insert(hash) }
        }
    }

    private mutating func switchToSketch() {
        var r = [UInt8](repeating: 0, count: 1 << Self.precision)
        for hash in exact { Self.add(hash, to: &r) }
        exact = []
        registers = r
    }

    @inline(__always)
    private static func add(_ hash: UInt64, to registers: inout [UInt8]) {
        let index = Int(hash >> UInt64(64 - precision))
        let rest = hash << UInt64(precision)
        let rank = UInt8(min(rest.leadingZeroBitCount, 64 - precision) + 1)
        if rank > registers[index] { registers[index] = rank }
    }

    /// HyperLogLog's estimate with linear counting for small cardinalities (Flajolet et al. 2007).
    private static func estimate(_ registers: [UInt8]) -> Double {
        let m = Double(registers.count)
        var sum = 0.0, zeros = 0
        for r in registers {
            sum += 1 / Double(UInt64(1) << UInt64(r))
            if r == 0 { zeros += 1 }
        }
        let alpha = 0.7213 / (1 + 1.079 / m)
        let raw = alpha * m * m / sum
        if raw <= 2.5 * m, zeros > 0 { return m * log(m / Double(zeros)) }
        return raw
    }

    /// The session hash: 64-bit FNV-1a of the UTF-8 bytes, then MurmurHash3's finalizer so every
    /// bit depends on every byte (HyperLogLog reads the top bits).
    @inline(__always)
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }

    /// The hash of a session string.
    package static func hash(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }
}
