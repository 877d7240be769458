/// Appends little-endian fixed-width values and length-prefixed strings: the summary cache's
/// entry format of the one per-file cache store (``FileCacheStore``) and its clients (the report's
/// summary cache, the alert's count cache).
package struct BinaryWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 4096) { bytes.reserveCapacity(capacity) }

    @inline(__always)
    package mutating func put<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A count, as an unsigned LEB128 varint: most counts of one file fit in a byte or two.
    @inline(__always)
    package mutating func put(_ value: Int) {
        var v = UInt64(bitPattern: Int64(value))
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    package mutating func put(_ value: Double) { put(value.bitPattern) }
    package mutating func put(_ value: Bool) { put(UInt8(value ? 1 : 0)) }
    package mutating func put(raw: [UInt8]) { bytes.append(contentsOf: raw) }

    package mutating func put(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            put(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    package mutating func put(_ text: String?) {
        put(text != nil)
        if let text { put(text) }
    }

    /// A count of items that follow.
    package mutating func putCount(_ n: Int) { put(UInt32(n)) }

    /// A string-keyed count map, in key order so equal maps encode alike.
    package mutating func put(_ counts: [String: Int]) {
        putCount(counts.count)
        for (key, value) in counts.sorted(by: { $0.key < $1.key }) {
            put(key)
            put(value)
        }
    }
}

/// Reads what ``BinaryWriter`` wrote, treating the bytes as hostile: every read is bounds-checked,
/// every count is checked against the bytes left before anything is allocated for it, and numbers
/// outside what a real summary can hold are refused. Any failure throws ``Invalid``; nothing traps.
package struct BinaryReader {
    package struct Invalid: Error { @inlinable package init() {} }

    // Usable from inline code: the readers' hot loops (a cache's counts, thousands of varints a
    // run) live in other modules, and a call per number kept them from being optimized there.
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline package internal(set) var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    @inlinable package var remaining: Int { bytes.count - offset }

    /// Moves past `n` bytes already checked by the caller (at most the bytes left).
    package mutating func skip(_ n: Int) { offset += Swift.min(Swift.max(0, n), remaining) }

    @inlinable @inline(__always)
    package mutating func get<T: FixedWidthInteger>(_: T.Type) throws(Invalid) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Invalid() }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Largest count or total a cached summary may hold (2^48): more than any file, small enough
    /// that merging a few million of them cannot overflow.
    package static let maximumCount: Int64 = 1 << 48

    /// A varint as ``BinaryWriter/put(_:)-(Int)`` writes it (at most 10 bytes).
    @inlinable @inline(__always)
    package mutating func varint() throws(Invalid) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count, shift < 64 else { throw Invalid() }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// A non-negative count no larger than ``maximumCount``.
    @inlinable @inline(__always)
    package mutating func count() throws(Invalid) -> Int {
        let value = try varint()
        guard value <= UInt64(Self.maximumCount) else { throw Invalid() }
        return Int(value)
    }

    /// A non-negative byte total (they saturate, so any non-negative value can be real).
    package mutating func bytesTotal() throws(Invalid) -> Int64 {
        let value = try get(Int64.self)
        guard value >= 0 else { throw Invalid() }
        return value
    }

    /// Latest instant a trace holds: the end of year 9999 (readers accept years 1970 to 9999).
    package static let latestMilliseconds: Int64 = 253_402_300_799_999

    /// Milliseconds since 1970 in the years readers accept, or one of the "never" sentinels.
    package mutating func time() throws(Invalid) -> Int64 {
        let value = try get(Int64.self)
        guard value == .max || value == .min || (0...Self.latestMilliseconds).contains(value) else { throw Invalid() }
        return value
    }

    /// A finite, non-negative double.
    @inlinable
    package mutating func amount() throws(Invalid) -> Double {
        let value = Double(bitPattern: try get(UInt64.self))
        guard value.isFinite, value >= 0 else { throw Invalid() }
        return value
    }

    package mutating func bool() throws(Invalid) -> Bool {
        switch try get(UInt8.self) {
        case 0: return false
        case 1: return true
        default: throw Invalid()
        }
    }

    package mutating func string() throws(Invalid) -> String {
        let n = Int(try get(UInt32.self))
        guard remaining >= n else { throw Invalid() }
        defer { offset += n }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]), as: UTF8.self)
    }

    /// The next `n` bytes as they are.
    package mutating func raw(_ n: Int) throws(Invalid) -> [UInt8] {
        guard n >= 0, remaining >= n else { throw Invalid() }
        defer { offset += n }
        return Array(bytes[offset..<(offset + n)])
    }

    package mutating func optionalString() throws(Invalid) -> String? {
        try bool() ? try string() : nil
    }

    /// A count of items that follow, each at least `minimumSize` bytes: refused when the bytes left
    /// cannot hold them, so a hostile count never makes the reader reserve memory.
    package mutating func items(minimumSize: Int) throws(Invalid) -> Int {
        let n = Int(try get(UInt32.self))
        guard n <= remaining / max(1, minimumSize) else { throw Invalid() }
        return n
    }

    package mutating func counts() throws(Invalid) -> [String: Int] {
        let n = try items(minimumSize: 5)
        var result: [String: Int] = [:]
        result.reserveCapacity(n)
        for _ in 0..<n { result[try string()] = try count() }
        return result
    }
}
