/// Appends JSON text to a byte buffer: the fast, allocation-light half of the trace encoding.
///
/// Field order is the caller's; object punctuation is tracked so callers only name fields.
package struct JSONOutput {
    /// The bytes written so far.
    package var bytes: [UInt8]
    private var needsComma = false

    /// Creates an output, optionally reusing a buffer's capacity.
    package init(reusing buffer: [UInt8] = []) {
        bytes = buffer
        bytes.removeAll(keepingCapacity: true)
    }

    /// Starts an object.
    package mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Ends an object.
    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `"name":` with the separator before it.
    package mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    private mutating func dynamicKey(_ name: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = true
    }

    /// Writes a string field.
    package mutating func field(_ name: StaticString, _ value: String) {
        key(name); appendString(value)
    }

    /// Writes a string field unless the value is `nil`.
    package mutating func field(_ name: StaticString, _ value: String?) {
        if let value { field(name, value) }
    }

    /// Writes an integer field.
    package mutating func field(_ name: StaticString, _ value: Int64) {
        key(name); appendInteger(value)
    }

    /// Writes an integer field unless the value is `nil`.
    package mutating func field(_ name: StaticString, _ value: Int64?) {
        if let value { field(name, value) }
    }

    /// Writes an integer field.
    package mutating func field(_ name: StaticString, _ value: Int) {
        field(name, Int64(value))
    }

    /// Writes an integer field unless the value is `nil`.
    package mutating func field(_ name: StaticString, _ value: Int?) {
        if let value { field(name, Int64(value)) }
    }

    /// Writes a number field with at most three decimals.
    package mutating func field(_ name: StaticString, _ value: Double) {
        key(name); appendNumber(value)
    }

    /// Writes a number field unless the value is `nil`.
    package mutating func field(_ name: StaticString, _ value: Double?) {
        if let value { field(name, value) }
    }

    /// Writes `true` or `false` unless the value is `nil`.
    package mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: value ? [0x74, 0x72, 0x75, 0x65] : [0x66, 0x61, 0x6C, 0x73, 0x65])
    }

    /// Writes a timestamp field as RFC 3339 text.
    package mutating func field(_ name: StaticString, _ value: TraceTimestamp) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        value.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes an object of strings, keys sorted so output is deterministic.
    package mutating func field(_ name: StaticString, _ value: [String: String]) {
        key(name)
        beginObject()
        for k in value.keys.sorted() {
            dynamicKey(k)
            appendString(value[k]!)
        }
        endObject()
    }

    /// Writes an array of strings.
    package mutating func field(_ name: StaticString, _ value: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (i, element) in value.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Appends a JSON string literal with the escapes RFC 8259 requires.
    package mutating func appendString(_ value: String) {
        var value = value
        value.withUTF8 { appendString(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Appends a JSON string literal of UTF-8 bytes (a line's text, no `String` made) with the escapes RFC 8259 requires.
    package mutating func appendString(utf8: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        for i in 0..<utf8.count {
            let c = utf8[i]
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") { continue }
            if i > start { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[start..<i])) }
            start = i + 1
            bytes.append(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "u"), 48, 48, hex[Int(c >> 4)], hex[Int(c & 15)]])
            }
        }
        if start < utf8.count { bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: utf8[start...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a decimal integer.
    package mutating func appendInteger(_ value: Int64) {
        DecimalText.with(value) { bytes.append(contentsOf: $0) }
    }

    /// Appends a number rounded to three decimals, without trailing zeros (`12`, `12.5`, `0.125`).
    /// Non-finite values, which JSON cannot hold, are written as `0`.
    package mutating func appendNumber(_ value: Double) {
        guard value.isFinite else { bytes.append(48); return }
        let thousandths = (value * 1000).rounded()
        guard abs(thousandths) < 9.0e15 else {
            bytes.append(contentsOf: Array(String(value).utf8))
            return
        }
        var t = Int64(thousandths)
        if t < 0 { bytes.append(UInt8(ascii: "-")); t = -t }
        appendInteger(t / 1000)
        var frac = t % 1000
        guard frac != 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var divisor: Int64 = 100
        while frac != 0 {
            bytes.append(UInt8(48 + frac / divisor))
            frac %= divisor
            divisor /= 10
        }
    }
}
