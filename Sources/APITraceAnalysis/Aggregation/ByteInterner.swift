import Foundation

/// Maps short byte strings (routes, methods, identities) to small dense ids without allocating a
/// `String` per lookup.
///
/// Trace files repeat the same few hundred values millions of times; hashing the raw bytes into
/// an open-addressing table and comparing on a hash hit is several times cheaper than building a
/// `String` and hashing it through `Dictionary`.
struct ByteInterner {
    private var storage: [UInt8] = []
    private var starts: [Int] = []
    private var lengths: [Int] = []
    private var hashes: [UInt64] = []
    /// Slot -> id + 1 (0 = empty).
    private var table: [Int32]
    private var mask: Int

    /// Most distinct values; past it every new value maps to the id of `(other)`, so memory stays
    /// bounded when a producer writes ids into routes or identities.
    let limit: Int
    private var overflowID: Int?

    init(capacity: Int = 256, limit: Int = 10_000) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        table = Array(repeating: 0, count: size)
        mask = size - 1
        self.limit = max(2, limit)
    }

    /// Number of distinct values interned.
    var count: Int { starts.count }

    /// The id of `bytes`, adding it when new.
    @inline(__always)
    mutating func id(of bytes: UnsafeRawBufferPointer) -> Int {
        if let id = lookup(bytes, insert: starts.count < limit - 1) { return id }
        if let overflowID { return overflowID }
        let id = Self.other.withUnsafeBytes { other in
            lookup(other, insert: true) ?? forceInsert(other)
        }
        overflowID = id
        return id
    }

    private static let other = Array("(other)".utf8)

    /// Inserts without the probe limit (only `(other)` itself, once).
    private mutating func forceInsert(_ bytes: UnsafeRawBufferPointer) -> Int {
        var slot = Int(truncatingIfNeeded: Self.hash(bytes)) & mask
        while table[slot] != 0 { slot = (slot + 1) & mask }
        let id = starts.count
        starts.append(storage.count)
        lengths.append(bytes.count)
        hashes.append(Self.hash(bytes))
        storage.append(contentsOf: bytes)
        table[slot] = Int32(id + 1)
        if starts.count * 2 > table.count { grow() }
        return id
    }

    /// The id of `bytes`; when absent, adds it if `insert`, else returns `nil`.
    @inline(__always)
    private mutating func lookup(_ bytes: UnsafeRawBufferPointer, insert: Bool) -> Int? {
        let hash = Self.hash(bytes)
        var slot = Int(truncatingIfNeeded: hash) & mask
        var probes = 0
        while true {
            let entry = Int(table[slot])
            if entry == 0 { break }
            let id = entry - 1
            if hashes[id] == hash, lengths[id] == bytes.count, equals(id, bytes) { return id }
            slot = (slot + 1) & mask
            probes += 1
        }
        // A probe this long means crafted collisions: the value joins `(other)` rather than
        // making every later lookup scan.
        guard insert, probes < Self.maximumProbes else { return nil }
        let id = starts.count
        starts.append(storage.count)
        lengths.append(bytes.count)
        hashes.append(hash)
        storage.append(contentsOf: bytes)
        table[slot] = Int32(id + 1)
        if starts.count * 2 > table.count { grow() }
        return id
    }

    /// The id of a string, adding it when new.
    mutating func id(of string: String) -> Int {
        var string = string
        return string.withUTF8 { id(of: UnsafeRawBufferPointer($0)) }
    }

    /// The text of an id.
    func string(_ id: Int) -> String {
        storage.withUnsafeBytes { String(decoding: UnsafeRawBufferPointer(rebasing: $0[starts[id]..<(starts[id] + lengths[id])]), as: UTF8.self) }
    }

    private func equals(_ id: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        return storage.withUnsafeBytes { memcmp($0.baseAddress! + starts[id], base, bytes.count) == 0 }
    }

    private mutating func grow() {
        let size = table.count * 2
        table = Array(repeating: 0, count: size)
        mask = size - 1
        for id in 0..<starts.count {
            var slot = Int(truncatingIfNeeded: hashes[id]) & mask
            while table[slot] != 0 { slot = (slot + 1) & mask }
            table[slot] = Int32(id + 1)
        }
    }

    /// Longest probe before a new value is refused (see ``lookup(_:insert:)``).
    static let maximumProbes = 64

    /// Random per process, so a file cannot be crafted to collide in every reader's table.
    private static let seed = UInt64.random(in: 0...UInt64.max)

    /// FNV-1a over 8-byte words from a random basis, then a final mix: fast on short keys, good
    /// spread for a table, and not predictable by a file's author.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        let n = bytes.count
        var i = 0
        while i + 8 <= n {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x0000_0100_0000_01B3
            i += 8
        }
        while i < n {
            h = (h ^ UInt64(bytes[i])) &* 0x0000_0100_0000_01B3
            i += 1
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        return h ^ UInt64(n)
    }
}
