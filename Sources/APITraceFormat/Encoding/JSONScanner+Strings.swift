extension JSONScanner {
    /// Scans a string literal, returning its raw contents and whether it holds escapes.
    ///
    /// Plain runs are passed over eight bytes at a time; a backslash, a byte of a multi-byte UTF-8
    /// sequence or a control byte stops the run and is checked here, so a string this returns is
    /// valid JSON text whose escapes ``decodeEscapes(_:into:)`` can decode without failing.
    @inline(__always)
    mutating func scanString() throws(Error) -> (UnsafeRawBufferPointer, Bool) {
        guard peek() == UInt8(ascii: "\"") else { throw fail("expected a string") }
        position += 1
        let start = position
        var escaped = false
        while true {
            position = bytes.firstStringSpecialByte(from: position)
            guard position < bytes.count else { throw fail("unterminated string") }
            let c = bytes[position]
            if c == UInt8(ascii: "\"") {
                let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return (raw, escaped)
            }
            if c == UInt8(ascii: "\\") {
                escaped = true
                try scanEscape()
            } else if c >= 0x80 {
                try scanUTF8()
            } else {
                throw fail("control character in string")
            }
        }
    }

    /// Checks the escape at `position` (a backslash) and steps over it; a `\u` high surrogate must be
    /// followed by a `\u` low surrogate, and a low surrogate must not stand alone.
    private mutating func scanEscape() throws(Error) {
        guard position + 1 < bytes.count else { throw fail("unterminated string") }
        switch bytes[position + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 2
        case UInt8(ascii: "u"):
            guard let unit = Self.hex4(bytes, position + 2) else { throw fail("invalid \\u escape in string") }
            if (0xDC00..<0xE000).contains(unit) { throw fail("unpaired surrogate in \\u escape") }
            if (0xD800..<0xDC00).contains(unit) {
                guard position + 12 <= bytes.count, bytes[position + 6] == UInt8(ascii: "\\"),
                      bytes[position + 7] == UInt8(ascii: "u"), let low = Self.hex4(bytes, position + 8),
                      (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
                position += 12
            } else {
                position += 6
            }
        default:
            throw fail("invalid escape in string")
        }
    }

    /// Checks the UTF-8 sequence at `position` (a byte of 0x80 or more) and steps over it: no
    /// overlong forms, no surrogates, nothing past U+10FFFF (RFC 3629, which RFC 8259 requires).
    private mutating func scanUTF8() throws(Error) {
        let lead = bytes[position]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw fail("invalid UTF-8 in string")
        }
        guard position + length <= bytes.count else { throw fail("invalid UTF-8 in string") }
        let second = bytes[position + 1]
        guard second >= low, second <= high else { throw fail("invalid UTF-8 in string") }
        for i in 2..<length where bytes[position + i] & 0xC0 != 0x80 { throw fail("invalid UTF-8 in string") }
        position += length
    }

    /// The value of four hex digits at `at`, or nil.
    @inline(__always)
    static func hex4(_ raw: UnsafeRawBufferPointer, _ at: Int) -> UInt32? {
        guard at + 4 <= raw.count else { return nil }
        var v: UInt32 = 0
        for j in at..<(at + 4) {
            let c = raw[j]
            let d: UInt8
            switch c {
            case 48...57: d = c - 48
            case 65...70: d = c - 55
            case 97...102: d = c - 87
            default: return nil
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    /// Reads a string value.
    package mutating func readString() throws(Error) -> String {
        let (raw, escaped) = try scanString()
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        return Self.unescape(raw)
    }

    /// Reads a string value's raw bytes (escapes checked, not decoded) without allocating.
    package mutating func readRawString() throws(Error) -> (bytes: UnsafeRawBufferPointer, hasEscapes: Bool) {
        try scanString()
    }

    /// The raw contents of the string at ``position`` when it is written plainly (its `"` right
    /// there, then no escape, control byte or byte of 0x80 or more before its closing quote),
    /// consumed; nil, consuming nothing, for anything else (whitespace first, `null`, escapes,
    /// UTF-8, another type), which ``readRawString()`` then reads. What it reads,
    /// ``readRawString()`` would have read alike: the fast path of the writer's own form.
    @inline(__always)
    package mutating func readPlainString() -> UnsafeRawBufferPointer? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let end = bytes.firstStringSpecialByte(from: position + 1)
        guard end < bytes.count, bytes[end] == UInt8(ascii: "\"") else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[(position + 1)..<end])
        position = end + 1
        return raw
    }

    /// The text of a raw string's contents as this scanner returned them (escapes checked).
    package static func unescape(_ raw: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: raw.count) { out in
            decodeEscapes(raw, into: UnsafeMutableRawPointer(out.baseAddress!))
        }
    }

    /// Decodes the escapes of a raw string's contents (as ``scanString()`` checked them) into `out`,
    /// which has room for `raw.count` bytes (an escape never decodes to more bytes than it takes);
    /// returns the decoded length. Text that did not come from the scanner decodes each bad escape
    /// to U+FFFD rather than failing.
    package static func decodeEscapes(_ raw: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        var n = 0
        var i = 0
        @inline(__always) func put(_ b: UInt8) { out.storeBytes(of: b, toByteOffset: n, as: UInt8.self); n += 1 }
        func putScalar(_ v: UInt32) {
            switch v {
            case 0..<0x80: put(UInt8(v))
            case 0x80..<0x800: put(UInt8(0xC0 | v >> 6)); put(UInt8(0x80 | v & 0x3F))
            case 0x800..<0x10000:
                put(UInt8(0xE0 | v >> 12)); put(UInt8(0x80 | v >> 6 & 0x3F)); put(UInt8(0x80 | v & 0x3F))
            default:
                put(UInt8(0xF0 | v >> 18)); put(UInt8(0x80 | v >> 12 & 0x3F))
                put(UInt8(0x80 | v >> 6 & 0x3F)); put(UInt8(0x80 | v & 0x3F))
            }
        }
        while i < raw.count {
            let c = raw[i]
            guard c == UInt8(ascii: "\\"), i + 1 < raw.count else { put(c); i += 1; continue }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "n"): put(0x0A)
            case UInt8(ascii: "r"): put(0x0D)
            case UInt8(ascii: "t"): put(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4(raw, i) else { putScalar(0xFFFD); continue }
                i += 4
                if (0xD800..<0xDC00).contains(unit), i + 6 <= raw.count, raw[i] == UInt8(ascii: "\\"),
                   raw[i + 1] == UInt8(ascii: "u"), let low = hex4(raw, i + 2), (0xDC00..<0xE000).contains(low) {
                    putScalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                    i += 6
                } else if (0xD800..<0xE000).contains(unit) {
                    putScalar(0xFFFD)  // 3 bytes for 6: still fits
                } else {
                    putScalar(unit)
                }
            default: put(e)  // `"`, `\`, `/` (and, from text that did not come from the scanner, anything)
            }
        }
        return n
    }
}

extension UnsafeRawBufferPointer {
    /// Offset of the first byte at or after `start` that ends a run of plain ASCII string content in
    /// a JSON string literal: `"`, `\`, a control byte or a byte of 0x80 or more (checked as UTF-8
    /// by the caller); `count` when there is none.
    ///
    /// Looks at eight bytes at a time: strings are most of a trace line, and this loop is most of
    /// the cost of scanning one.
    @inlinable @inline(__always)
    package func firstStringSpecialByte(from start: Int) -> Int {
        var position = start
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while position + 8 <= count {
            let w = UInt64(littleEndian: loadUnaligned(fromByteOffset: position, as: UInt64.self))
            let q = w ^ (ones &* 0x22), b = w ^ (ones &* 0x5C)
            // A set high bit marks a byte equal to `"`, equal to `\`, below 0x20 or of 0x80 and up;
            // borrows can only mark bytes above the first real one, so the lowest mark is exact.
            let hits = ((q &- ones) & ~q | (b &- ones) & ~b | (w &- ones &* 0x20) & ~w | w) & highs
            if hits != 0 { return position + hits.trailingZeroBitCount / 8 }
            position += 8
        }
        while position < count {
            let c = self[position]
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 || c >= 0x80 { return position }
            position += 1
        }
        return count
    }
}
