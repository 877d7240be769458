extension JSONScanner {
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
            if i > start, i == bytes.count || !Self.isNumberByte(bytes[i]), i - start == 1 || bytes[start] != 48 {
                position = i
                return negative ? -v : v
            }
        }
        let d = try readDouble()
        guard d.isFinite, abs(d) < 9.2e18 else { throw fail("number out of range") }
        return Int64(d)
    }

    /// An integer written plainly at ``position`` (``plainInt(_:_:from:)``, then the end or a byte
    /// that cannot continue a number), consumed; nil, consuming nothing, for anything else
    /// (whitespace first, `null`, a fraction, an exponent, more digits), which ``readInt()`` then
    /// reads. What it reads, ``readInt()`` would have read alike (its own first path, without the
    /// whitespace).
    @inline(__always)
    package mutating func readPlainInt() -> Int64? {
        guard let base = bytes.baseAddress,
              let (value, end) = Self.plainInt(base.assumingMemoryBound(to: UInt8.self), bytes.count, from: position),
              end == bytes.count || !Self.isNumberByte(bytes[end]) else { return nil }
        position = end
        return value
    }

    /// The integer at `from` of the `n` bytes at `p` when it is written as the trace writer writes
    /// integers, `-?(0|[1-9][0-9]{0,17})` (at most 18 digits, so it cannot overflow), with where its
    /// digits end (what follows is the caller's to check); nil for anything else. The common path of
    /// every reader of numbers (``readPlainInt()``, the counting reader).
    @inline(__always)
    package static func plainInt(_ p: UnsafePointer<UInt8>, _ n: Int, from: Int) -> (value: Int64, end: Int)? {
        var j = from
        guard j < n else { return nil }
        let negative = p[j] == UInt8(ascii: "-")
        if negative { j &+= 1 }
        let start = j
        var v: Int64 = 0
        let limit = min(n, start &+ 18)
        while j < limit {
            let digit = p[j] &- 48
            if digit >= 10 { break }
            v = v &* 10 &+ Int64(digit)
            j &+= 1
        }
        guard j > start, j &- start == 1 || p[start] != 48 else { return nil }
        return (negative ? -v : v, j)
    }

    @inline(__always) private static func isNumberByte(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
            || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")
    }

    /// Exact powers of ten, 10^0 to 10^22 (the reader of counted fields divides by the same ones).
    static let powersOfTen: [Double] = (0...22).map { pow10($0) }
    private static func pow10(_ n: Int) -> Double { var v = 1.0; for _ in 0..<n { v *= 10 }; return v }

    /// Reads a number value, in RFC 8259's grammar: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
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
        guard i - intStart == 1 || bytes[intStart] != 48 else { throw Error(offset: start, reason: "number with a leading zero") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fracStart = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
                mantissa = mantissa &* 10 &+ UInt64(bytes[i] - 48); digits += 1; fractionDigits += 1; i += 1
            }
            guard i > fracStart else { position = i; throw fail("expected digits after '.'") }
        }
        var hasExponent = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            hasExponent = true
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let expStart = i
            while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
            guard i > expStart else { position = i; throw fail("expected digits in exponent") }
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
}
