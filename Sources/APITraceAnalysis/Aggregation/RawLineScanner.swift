import APITraceFormat

/// A JSON object scanner tuned for trace lines: one tight loop over the bytes, strings found
/// eight bytes at a time (``UnsafeRawBufferPointer/firstStringSpecialByte(from:)``), numbers parsed in place. Anything unusual (nested values of fields the
/// report skips, numbers with exponents) is handed to ``JSONScanner``, so what it accepts and
/// rejects is what ``TraceLine/decode(_:)`` accepts and rejects.
struct RawLineScanner {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    struct Failure: Error { var reason: String }

    @inline(__always) func fail(_ reason: String) -> Failure { Failure(reason: "\(reason) at column \(position + 1)") }

    @inline(__always) mutating func skipWhitespace() {
        while position < bytes.count {
            let c = bytes[position]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            position += 1
        }
    }

    @inline(__always) mutating func peek() -> UInt8? {
        skipWhitespace()
        return position < bytes.count ? bytes[position] : nil
    }

    /// Expects `byte` (after whitespace) and consumes it.
    @inline(__always) mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        guard peek() == byte else { throw fail("expected \(what)") }
        position += 1
    }

    /// Scans a string literal starting at `"`; returns its raw contents.
    @inline(__always) mutating func string() throws(Failure) -> RawString {
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
                return RawString(bytes: raw, hasEscapes: escaped)
            }
            if c == UInt8(ascii: "\\") {
                escaped = true
                position += 2
                continue
            }
            throw fail("control character in string")
        }
    }

    /// True when the value is `null`, which it then consumes.
    @inline(__always) mutating func null() -> Bool {
        guard peek() == UInt8(ascii: "n"), position + 4 <= bytes.count,
              bytes[position + 1] == UInt8(ascii: "u"), bytes[position + 2] == UInt8(ascii: "l"),
              bytes[position + 3] == UInt8(ascii: "l") else { return false }
        position += 4
        return true
    }

    /// Reads a number: plain decimals in place, anything else through `JSONScanner`.
    @inline(__always) mutating func double() throws(Failure) -> Double {
        guard let first = peek() else { throw fail("expected a number") }
        var i = position
        var negative = false
        if first == UInt8(ascii: "-") { negative = true; i += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] &- 48 < 10 {
            mantissa = mantissa &* 10 &+ UInt64(bytes[i] &- 48); digits += 1; i += 1
        }
        var fraction = 0
        var sawDot = false
        if digits > 0, i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            sawDot = true
            i += 1
            while i < bytes.count, bytes[i] &- 48 < 10 {
                mantissa = mantissa &* 10 &+ UInt64(bytes[i] &- 48); digits += 1; fraction += 1; i += 1
            }
        }
        let next = i < bytes.count ? bytes[i] : 0
        if digits > 0, digits <= 15, !sawDot || fraction > 0, next != UInt8(ascii: "e"), next != UInt8(ascii: "E") {
            position = i
            // Exact: the mantissa fits in 53 bits and the divisor is an exact power of ten.
            let v = Double(mantissa) / Self.powerOfTen(fraction)
            return negative ? -v : v
        }
        var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[position...]))
        do {
            let v = try scanner.readDouble()
            position += scanner.position
            return v
        } catch {
            throw fail(error.reason)
        }
    }

    /// Reads an integer; a fraction or exponent is truncated toward zero, as `JSONScanner` does.
    @inline(__always) mutating func int() throws(Failure) -> Int64 {
        guard let first = peek() else { throw fail("expected a number") }
        var i = position
        if first == UInt8(ascii: "-") { i += 1 }
        var v: Int64 = 0
        let start = i
        while i < bytes.count, bytes[i] &- 48 < 10, i - start < 18 {
            v = v * 10 + Int64(bytes[i] &- 48)
            i += 1
        }
        if i > start, i == bytes.count || !Self.isNumberByte(bytes[i]) {
            position = i
            return first == UInt8(ascii: "-") ? -v : v
        }
        let d = try double()
        guard d.isFinite, abs(d) < 9.2e18 else { throw fail("number out of range") }
        return Int64(d)
    }

    /// Skips a value of any type.
    mutating func skipValue() throws(Failure) {
        switch peek() {
        case UInt8(ascii: "\"")?:
            _ = try string()
        case let c? where c == UInt8(ascii: "-") || c &- 48 < 10:
            _ = try double()
        default:
            var scanner = JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[position...]))
            do {
                try scanner.skipValue()
                position += scanner.position
            } catch {
                throw fail(error.reason)
            }
        }
    }

    @inline(__always) private static func isNumberByte(_ c: UInt8) -> Bool {
        c &- 48 < 10 || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
            || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
    }

    @inline(__always) private static func powerOfTen(_ n: Int) -> Double {
        switch n {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1000
        case 4: 10000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        default: 1_000_000_000_000_000
        }
    }
}
