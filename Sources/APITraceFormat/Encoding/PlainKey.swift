/// A JSON object key of one to sixteen bytes, held as two little-endian words, so a key expected
/// in a line is compared with the line's bytes in place (two loads, no search for its closing
/// quote) before any general lookup.
///
/// Made only from a key's raw bytes as ``JSONScanner`` read them without escapes, so they hold no
/// quote and no backslash: when the line holds those bytes followed by `"`, the key there is
/// exactly this one.
///
/// ```swift
/// let key = PlainKey(raw)!               // "method", as read once
/// if key.isAt(p, start, n) { ... }       // the key at `start` is "method" when its closing quote follows
/// ```
package struct PlainKey: Equatable {
    package private(set) var w0: UInt64 = 0
    package private(set) var w1: UInt64 = 0
    /// The masks that keep only the key's bytes of the two words loaded whole.
    private var m0: UInt64 = 0
    private var m1: UInt64 = 0
    /// Bytes of the key; 0 for no key (matches nothing).
    package private(set) var length = 0

    /// No key: ``isAt(_:_:_:)`` is false everywhere.
    package init() {}

    /// The key of these raw bytes; nil when they are empty or longer than sixteen bytes.
    package init?(_ raw: UnsafeRawBufferPointer) {
        let n = raw.count
        guard n >= 1, n <= 16, let base = raw.baseAddress else { return nil }
        let p = base.assumingMemoryBound(to: UInt8.self)
        w0 = Self.word(p, 0, min(n, 8), n)
        w1 = n > 8 ? Self.word(p, 8, n - 8, n) : 0
        m0 = Self.mask(min(n, 8))
        m1 = Self.mask(max(n - 8, 0))
        length = n
    }

    /// True when the `n` bytes at `p` hold this key from `start`, followed by its closing quote.
    /// Both words are loaded whole and masked to the key's length where sixteen bytes follow
    /// `start` (the common case: a key is followed by its value); byte by byte nearer the end.
    @_transparent
    package func isAt(_ p: UnsafePointer<UInt8>, _ start: Int, _ n: Int) -> Bool {
        guard length > 0, start &+ length < n, p[start &+ length] == UInt8(ascii: "\"") else { return false }
        if start &+ 16 <= n {
            return Self.load(p, start) & m0 == w0 && Self.load(p, start &+ 8) & m1 == w1
        }
        return Self.word(p, start, min(length, 8), n) == w0 && (length <= 8 || Self.word(p, start &+ 8, length &- 8, n) == w1)
    }

    /// Eight bytes at `from`, which has at least eight bytes after it.
    @inline(__always)
    private static func load(_ p: UnsafePointer<UInt8>, _ from: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(fromByteOffset: from, as: UInt64.self))
    }

    /// The mask of the low `count` (0 to 8) bytes of a word.
    private static func mask(_ count: Int) -> UInt64 { count >= 8 ? ~0 : (1 << UInt64(count * 8)) &- 1 }

    /// `count` (at most 8) bytes from `from` as a little-endian word, zero above them; reads past
    /// them only within the `n` bytes at `p`.
    @inline(__always)
    private static func word(_ p: UnsafePointer<UInt8>, _ from: Int, _ count: Int, _ n: Int) -> UInt64 {
        if from + 8 <= n {
            let w = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(fromByteOffset: from, as: UInt64.self))
            return count >= 8 ? w : w & ((1 << UInt64(count * 8)) &- 1)
        }
        var w: UInt64 = 0
        for k in 0..<count { w |= UInt64(p[from + k]) << UInt64(k * 8) }
        return w
    }
}
