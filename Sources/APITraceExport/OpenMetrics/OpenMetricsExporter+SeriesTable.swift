import Foundation

extension OpenMetricsExporter.FileTally {
    /// The series of one tally by the raw bytes of their labels: series `n` is the `n`-th key added.
    ///
    /// Open addressing over one array of slots, the keys' bytes kept one after another in a single
    /// buffer: a lookup hashes the key once, eight bytes at a time, and compares bytes only on a hash
    /// match, where a `[key: series]` dictionary made a key value, ran SipHash and compared arrays
    /// per line. The hash is seeded at random per process, so a producer cannot choose labels that
    /// collide; should a probe still run long, the table is rebuilt with a new seed (a few times at
    /// most, so no input can make it grow without bound).
    struct SeriesTable {
        /// Series number per slot, -1 for an empty slot; the count is a power of two.
        private var slots = [Int](repeating: -1, count: 64)
        /// Each series' hash, by series number.
        private var hashes: [UInt64] = []
        /// Where each series' key starts in ``keys``; it ends where the next one starts.
        private var starts: [Int] = []
        private var keys: [UInt8] = []
        private var seed = SeriesTable.processSeed
        private var reseeds = 0

        /// Series a producer would need to collide on before the table draws a new seed.
        private static let longProbe = 48
        private static let maximumReseeds = 4

        private static let processSeed: (UInt64, UInt64) = {
            var generator = SystemRandomNumberGenerator()
            return (generator.next(), generator.next() | 1)
        }()

        init() {}

        /// Series added so far.
        var count: Int { starts.count }

        /// The series number of `key`, adding it as series ``count`` when it is new.
        @inline(__always)
        mutating func series(of key: [UInt8]) -> (series: Int, isNew: Bool) {
            key.withUnsafeBytes { series(of: $0) }
        }

        /// ``series(of:)`` of a key's bytes where they are (the request key is written on the stack).
        @inline(__always)
        mutating func series(of key: UnsafeRawBufferPointer) -> (series: Int, isNew: Bool) {
            let h = Self.hash(key, seed)
            let mask = slots.count - 1
            var i = Int(truncatingIfNeeded: h) & mask
            var probes = 0
            while true {
                let s = slots[i]
                if s < 0 { break }
                if hashes[s] == h, self.key(s, equals: key) { return (s, false) }
                i = (i + 1) & mask
                probes += 1
            }
            let series = starts.count
            starts.append(keys.count)
            keys.append(contentsOf: key.bindMemory(to: UInt8.self))
            hashes.append(h)
            slots[i] = series
            if series * 2 >= slots.count {
                rebuild(capacity: slots.count * 2, rehash: false)
            } else if probes > Self.longProbe, reseeds < Self.maximumReseeds {
                reseeds += 1
                var generator = SystemRandomNumberGenerator()
                seed = (generator.next(), generator.next() | 1)
                rebuild(capacity: slots.count, rehash: true)
            }
            return (series, true)
        }

        private func key(_ series: Int, equals key: UnsafeRawBufferPointer) -> Bool {
            let start = starts[series]
            let end = series + 1 < starts.count ? starts[series + 1] : keys.count
            guard end - start == key.count else { return false }
            return keys.withUnsafeBytes { all in
                key.isEmpty || memcmp(all.baseAddress! + start, key.baseAddress!, key.count) == 0
            }
        }

        private mutating func rebuild(capacity: Int, rehash: Bool) {
            if rehash {
                hashes = (0..<starts.count).map { s in
                    let start = starts[s], end = s + 1 < starts.count ? starts[s + 1] : keys.count
                    return keys.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[start..<end]), seed) }
                }
            }
            slots = [Int](repeating: -1, count: capacity)
            let mask = capacity - 1
            for (s, h) in hashes.enumerated() {
                var i = Int(truncatingIfNeeded: h) & mask
                while slots[i] >= 0 { i = (i + 1) & mask }
                slots[i] = s
            }
        }

        /// A seeded hash of the bytes, eight at a time, each step a full-width multiply folded (as wyhash's).
        @inline(__always)
        private static func hash(_ bytes: UnsafeRawBufferPointer, _ seed: (UInt64, UInt64)) -> UInt64 {
            let n = bytes.count
            var h = seed.0 ^ (UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15)
            var i = 0
            while i + 8 <= n {
                h = mix(h ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)), seed.1)
                i += 8
            }
            if i < n {
                var w: UInt64 = 0
                if n >= 8 {
                    // The last eight bytes, shifted down to the ones left: the same word as byte by byte.
                    w = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) >> UInt64((8 - (n - i)) * 8)
                } else {
                    for k in i..<n { w |= UInt64(bytes[k]) << UInt64((k - i) * 8) }
                }
                h = mix(h ^ w ^ 0xA076_1D64_78BD_642F, seed.1)
            }
            return mix(h, seed.1 ^ 0xE703_7ED1_A0B4_28DB)
        }

        @inline(__always)
        private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
            let m = a.multipliedFullWidth(by: b)
            return m.high ^ m.low
        }
    }
}
