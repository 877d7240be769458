/// A JSON reader that walks bytes in place: no intermediate tree, no copies of text it is told to skip.
///
/// Trace lines have a known, flat schema, so readers ask for exactly the values they want
/// (`nextKey()`, `readString()`, `readInt()`) and skip the rest. This is what keeps reading
/// traces close to the speed of decompression; Foundation's `JSONDecoder` is several times slower.
///
/// It reads JSON as RFC 8259 defines it, and nothing else: every value it passes over, skipped ones
/// included, is checked against the grammar (strings are UTF-8 with valid escapes and no control
/// characters, numbers have no leading zeros, containers nest properly up to ``maximumDepth``), so a
/// line this scanner accepts is a line `jq` and Python's `json` accept, and the reverse.
package struct JSONScanner {
    /// The bytes being scanned. They must outlive the scanner.
    package let bytes: UnsafeRawBufferPointer
    /// Offset of the next unread byte.
    package internal(set) var position: Int = 0
    private var expectingFirstMember = false

    /// Deepest nesting of objects and arrays accepted inside a skipped value (Python's `json` stops
    /// near 1,000 and Foundation at 512; a trace line has no reason to nest at all).
    package static let maximumDepth = 512

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

    @inline(__always) func fail(_ reason: String) -> Error { Error(offset: position, reason: reason) }

    @inline(__always) private mutating func skipWhitespace() {
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

    /// Consumes `{`.
    package mutating func beginObject() throws(Error) {
        guard peek() == UInt8(ascii: "{") else { throw fail("expected an object") }
        position += 1
        expectingFirstMember = true
    }

    /// Returns the next key of the current object (its raw bytes between the quotes, and whether
    /// they hold escapes the caller must decode before matching) and consumes the colon after it,
    /// or `nil` after consuming the closing `}`.
    package mutating func nextKey() throws(Error) -> RawText? {
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
        let (raw, escaped) = try scanString()
        guard peek() == UInt8(ascii: ":") else { throw fail("expected ':'") }
        position += 1
        return RawText(bytes: raw, hasEscapes: escaped)
    }

    /// Consumes the next key when it is `key` written as the trace writer writes keys (`"key":` right
    /// after the `{` or the `,`, no whitespace, no escapes) and returns its bytes; nil, consuming
    /// nothing, for anything else, which ``nextKey()`` then reads. What it consumes, ``nextKey()``
    /// would have read as the same key: the fast path of a reader that expects a key there.
    @inline(__always)
    package mutating func nextKey(ifItIs key: PlainKey) -> UnsafeRawBufferPointer? {
        guard let base = bytes.baseAddress else { return nil }
        let p = base.assumingMemoryBound(to: UInt8.self), n = bytes.count
        var start = position + 1
        if expectingFirstMember {
            guard position < n, p[position] == UInt8(ascii: "\"") else { return nil }
        } else {
            guard position + 1 < n, p[position] == UInt8(ascii: ","), p[position + 1] == UInt8(ascii: "\"") else { return nil }
            start += 1
        }
        let colon = start + key.length + 1
        guard key.isAt(p, start, n), colon < n, p[colon] == UInt8(ascii: ":") else { return nil }
        position = colon + 1
        expectingFirstMember = false
        return UnsafeRawBufferPointer(start: p + start, count: key.length)
    }

    /// True when the next value is `null`, which it then consumes.
    package mutating func consumeNull() -> Bool {
        guard peek() == UInt8(ascii: "n"), matches("null") else { return false }
        position += 4
        return true
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

    /// Skips one value of any type, checking it against the JSON grammar: nested objects and arrays
    /// are walked without recursion, so depth costs no stack, and refused past ``maximumDepth``.
    package mutating func skipValue() throws(Error) {
        // One bit per open container, 1 for an object; past 64 levels the rest spill to an array.
        var kinds: UInt64 = 0
        var deeper: [Bool] = []
        var depth = 0
        func push(_ object: Bool) throws(Error) {
            guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
            if depth < 64 {
                if object { kinds |= 1 << UInt64(depth) } else { kinds &= ~(1 << UInt64(depth)) }
            } else {
                deeper.append(object)
            }
            depth += 1
        }
        func topIsObject() -> Bool {
            depth <= 64 ? kinds & (1 << UInt64(depth - 1)) != 0 : deeper[depth - 65]
        }
        func pop() {
            depth -= 1
            if depth >= 64 { deeper.removeLast() }
        }
        value: while true {
            guard let c = peek() else { throw fail("expected a value") }
            switch c {
            case UInt8(ascii: "\""):
                _ = try scanString()
            case UInt8(ascii: "{"):
                position += 1
                try push(true)
                if peek() == UInt8(ascii: "}") {
                    position += 1
                    pop()
                } else {
                    try memberKey()
                    continue value
                }
            case UInt8(ascii: "["):
                position += 1
                try push(false)
                if peek() == UInt8(ascii: "]") {
                    position += 1
                    pop()
                } else {
                    continue value
                }
            case UInt8(ascii: "t"), UInt8(ascii: "f"):
                _ = try readBool()
            case UInt8(ascii: "n"):
                guard consumeNull() else { throw fail("expected a value") }
            case UInt8(ascii: "-"), 48...57:
                _ = try readDouble()
            default:
                throw fail("expected a value")
            }
            // After a value: close containers or move to the next member.
            while depth > 0 {
                let object = topIsObject()
                guard let c = peek() else { throw fail(object ? "unterminated object" : "unterminated array") }
                if c == UInt8(ascii: ",") {
                    position += 1
                    if object { try memberKey() }
                    continue value
                }
                guard c == UInt8(ascii: object ? "}" : "]") else {
                    throw fail(object ? "expected ',' or '}'" : "expected ',' or ']'")
                }
                position += 1
                pop()
            }
            return
        }
    }

    /// Consumes a member's key and its colon inside a skipped object.
    private mutating func memberKey() throws(Error) {
        guard peek() == UInt8(ascii: "\"") else { throw fail("expected a key") }
        _ = try scanString()
        guard peek() == UInt8(ascii: ":") else { throw fail("expected ':'") }
        position += 1
    }

    /// Reads an object whose values are kept as strings; other values are kept as their JSON text.
    /// Keys are decoded; a repeated key keeps its last value, as every JSON reader does.
    package mutating func readStringMap() throws(Error) -> [String: String] {
        var map: [String: String] = [:]
        try beginObject()
        while let rawKey = try nextKey() {
            let key = rawKey.string
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
