/// A JSON reader that walks bytes in place: no intermediate tree, no copies of text it is told to skip.
///
/// Trace lines have a known, flat schema, so readers ask for exactly the values they want
/// (`nextKey()`, `readString()`, `readInt()`) and skip the rest. This is what keeps reading
/// traces close to the speed of decompression; Foundation's `JSONDecoder` is several times slower.
package struct JSONScanner {
    /// The bytes being scanned. They must outlive the scanner.
    package let bytes: UnsafeRawBufferPointer
    /// Offset of the next unread byte.
    package private(set) var position: Int = 0
    private var expectingFirstMember = false

    /// Creates a scanner over bytes that must stay valid while it is used.
    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// A syntax or type error, with the byte offset into the scanned text.
    package struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// Byte offset where the problem was found.
        package var offset: Int
        /// What was wrong.
        package var reason: String
        package var description: String { "\(reason) at column \(offset + 1)" }
    }

    @inline(__always) private func fail(_ reason: String) -> Error { Error(offset: position, reason: reason) }

    @inline(__always) private mutating func skipWhitespace() {
        while position < bytes.count {
            let c = bytes[position]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            position += 1
        }
    }

    @inline(__always) private mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    /// Consumes `{`.
    package mutating func beginObject() throws(Error) {
        guard peek() == UInt8(ascii: "{") else { throw fail("expected an object") }
        position += 1
        expectingFirstMember = true
    }

    /// Returns the next key of the current object (raw bytes between the quotes) and consumes the
    /// colon after it, or `nil` after consuming the closing `}`.
    ///
    /// Keys with escapes are returned raw; they never match a schema field and are skipped.
    package mutating func nextKey() throws(Error) -> UnsafeRawBufferPointer? {
        guard let c = peek() else { throw fail("unterminated object") }
        if c == UInt8(ascii: "}") {
            position += 1
            expectingFirstMember = false
            return nil
        }
        if !expectingFirstMember {
            guard c == UInt8(ascii: ",") else { throw fail("expected ',' or '}'") }
            position += 1
            guard peek() == UInt8(ascii: "\"") else { throw fail("expected a key") }
        } else if c != UInt8(ascii: "\"") {
            throw fail("expected a key")
        }
        expectingFirstMember = false
        let (raw, _) = try scanString()
        guard peek() == UInt8(ascii: ":") else { throw fail("expected ':'") }
        position += 1
        return raw
    }

    /// Scans a string literal, returning its raw contents and whether it holds escapes.
    private mutating func scanString() throws(Error) -> (UnsafeRawBufferPointer, Bool) {
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
                position += 2
                continue
            }
            throw fail("control character in string")
        }
    }

    /// True when the next value is `null`, which it then consumes.
    package mutating func consumeNull() -> Bool {
        guard peek() == UInt8(ascii: "n"), position + 4 <= bytes.count,
              bytes[position + 1] == UInt8(ascii: "u"), bytes[position + 2] == UInt8(ascii: "l"),
              bytes[position + 3] == UInt8(ascii: "l") else { return false }
        position += 4
        return true
    }

    /// Reads a string value.
    package mutating func readString() throws(Error) -> String {
        let (raw, escaped) = try scanString()
        guard escaped else { return String(decoding: raw, as: UTF8.self) }
        return try JSONScanner.unescape(raw, at: position)
    }

    /// Reads a string value's raw bytes (escapes not decoded) without allocating.
    package mutating func readRawString() throws(Error) -> (bytes: UnsafeRawBufferPointer, hasEscapes: Bool) {
        try scanString()
    }

    /// Decodes the escapes of a raw string's contents.
    package static func unescape(_ raw: UnsafeRawBufferPointer, at offset: Int = 0) throws(Error) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        func hex4(_ at: Int) -> UInt32? {
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
        while i < raw.count {
            let c = raw[i]
            guard c == UInt8(ascii: "\\") else { out.append(c); i += 1; continue }
            guard i + 1 < raw.count else { throw Error(offset: offset, reason: "bad escape in string") }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(i) else { throw Error(offset: offset, reason: "bad \\u escape in string") }
                i += 4
                if (0xD800..<0xDC00).contains(scalar), i + 6 <= raw.count, raw[i] == UInt8(ascii: "\\"),
                   raw[i + 1] == UInt8(ascii: "u"), let low = hex4(i + 2), (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw Error(offset: offset, reason: "bad escape in string")
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads an integer value. A number with a fraction or exponent is truncated toward zero.
    package mutating func readInt() throws(Error) -> Int64 {
        guard let c = peek() else { throw fail("expected a number") }
        if c == UInt8(ascii: "-") || (c >= 48 && c <= 57) {
            var i = position
            var negative = false
            if c == UInt8(ascii: "-") { negative = true; i += 1 }
            var v: Int64 = 0
            let start = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57, i - start < 18 {
                v = v * 10 + Int64(bytes[i] - 48)
                i += 1
            }
            if i > start, i == bytes.count || !Self.isNumberByte(bytes[i]) {
                position = i
                return negative ? -v : v
            }
        }
        let d = try readDouble()
        guard d.isFinite, abs(d) < 9.2e18 else { throw fail("number out of range") }
        return Int64(d)
    }

    @inline(__always) private static func isNumberByte(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
            || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
    }

    private static let powersOfTen: [Double] = (0...22).map { pow10($0) }
    private static func pow10(_ n: Int) -> Double { var v = 1.0; for _ in 0..<n { v *= 10 }; return v }

    /// Reads a number value.
    package mutating func readDouble() throws(Error) -> Double {
        guard let first = peek(), first == UInt8(ascii: "-") || (first >= 48 && first <= 57) else {
            throw fail("expected a number")
        }
        let start = position
        var i = position
        var negative = false
        if bytes[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        let intStart = i
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
            mantissa = mantissa &* 10 &+ UInt64(bytes[i] - 48); digits += 1; i += 1
        }
        guard i > intStart else { throw fail("expected a number") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fracStart = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
                mantissa = mantissa &* 10 &+ UInt64(bytes[i] - 48); digits += 1; fractionDigits += 1; i += 1
            }
            guard i > fracStart else { throw fail("expected digits after '.'") }
        }
        var hasExponent = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            hasExponent = true
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let expStart = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > expStart else { throw fail("expected digits in exponent") }
        }
        position = i
        // Exact when the mantissa fits in 53 bits and the divisor is an exact power of ten.
        if !hasExponent, digits <= 15, fractionDigits <= 22 {
            let v = Double(mantissa) / Self.powersOfTen[fractionDigits]
            return negative ? -v : v
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        guard let v = Double(text) else { throw Error(offset: start, reason: "bad number") }
        return v
    }

    /// Reads `true` or `false`.
    package mutating func readBool() throws(Error) -> Bool {
        guard peek() != nil else { throw fail("expected true or false") }
        if matches("true") { position += 4; return true }
        if matches("false") { position += 5; return false }
        throw fail("expected true or false")
    }

    /// Whether the unread bytes start with `literal`.
    @inline(__always) private func matches(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard position + n <= bytes.count else { return false }
        let p = literal.utf8Start
        for i in 0..<n where bytes[position + i] != p[i] { return false }
        return true
    }

    /// Skips one value of any type, nested objects and arrays included.
    package mutating func skipValue() throws(Error) {
        guard let c = peek() else { throw fail("expected a value") }
        switch c {
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while position < bytes.count {
                let b = bytes[position]
                if b == UInt8(ascii: "\"") { _ = try scanString(); continue }
                position += 1
                if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") { depth += 1 }
                if b == UInt8(ascii: "}") || b == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return }
                }
            }
            throw fail("unterminated object or array")
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            guard consumeNull() else { throw fail("expected null") }
        default:
            _ = try readDouble()
        }
    }

    /// Reads an object whose values are kept as strings; other values are kept as their JSON text.
    package mutating func readStringMap() throws(Error) -> [String: String] {
        var map: [String: String] = [:]
        try beginObject()
        while let rawKey = try nextKey() {
            let key = try JSONScanner.unescape(rawKey, at: position)
            if peek() == UInt8(ascii: "\"") {
                map[key] = try readString()
            } else {
                let start = position
                try skipValue()
                map[key] = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            }
        }
        return map
    }

    /// Reads an array of strings.
    package mutating func readStringArray() throws(Error) -> [String] {
        guard peek() == UInt8(ascii: "[") else { throw fail("expected an array") }
        position += 1
        var result: [String] = []
        if peek() == UInt8(ascii: "]") { position += 1; return result }
        while true {
            result.append(try readString())
            guard let c = peek() else { throw fail("unterminated array") }
            position += 1
            if c == UInt8(ascii: "]") { return result }
            guard c == UInt8(ascii: ",") else { throw fail("expected ',' or ']'") }
        }
    }

    /// True when only whitespace is left.
    package mutating func isAtEnd() -> Bool { peek() == nil }
}

extension UnsafeRawBufferPointer {
    /// Offset of the first byte at or after `start` that ends a run of plain string content in a
    /// JSON string literal: `"`, `\` or a control byte; `count` when there is none.
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
            // A set high bit marks a byte equal to `"`, equal to `\` or below 0x20; borrows can only
            // mark bytes above the first real one, so the lowest mark is exact.
            let hits = ((q &- ones) & ~q | (b &- ones) & ~b | (w &- ones &* 0x20) & ~w) & highs
            if hits != 0 { return position + hits.trailingZeroBitCount / 8 }
            position += 8
        }
        while position < count {
            let c = self[position]
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { return position }
            position += 1
        }
        return count
    }

    /// True when these bytes are exactly the ASCII text of `literal`.
    @inline(__always)
    package func equals(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { lit in
            for i in 0..<count where self[i] != lit[i] { return false }
            return true
        }
    }
}
