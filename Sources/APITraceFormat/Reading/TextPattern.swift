/// A glob over text where `*` stands for any run of characters (`/apps/*`, `URLError.*`): the one
/// matcher of every command's `--route`, `--session` and `--host` (cat, export, report), of alert
/// rule scopes and of error lists. Without a `*` it matches exactly; there is no other special
/// character (`?` and `[` are themselves).
package struct TextPattern: Sendable, Equatable, Hashable {
    /// The grammar in one sentence, for the help of every option that takes a pattern.
    package static let help = "* matches any run of characters, anywhere and more than once (/apps/*, */reviews, *.example.com); without * the value must match exactly"

    /// The pattern as written.
    package let text: String
    private let parts: [[UInt8]]

    package init(_ text: String) {
        self.text = text
        parts = text.split(separator: "*", omittingEmptySubsequences: false).map { Array($0.utf8) }
    }

    /// True when `value` matches.
    package func matches(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { matches(UnsafeRawBufferPointer($0)) }
    }

    /// True when a field read from a line matches (its unescaped text when it had escapes).
    @inline(__always)
    package func matches(_ value: RawText) -> Bool {
        value.hasEscapes ? matches(value.string) : matches(value.bytes)
    }

    /// The filter rule of every command: no pattern keeps everything; a pattern keeps only events
    /// that carry the field and whose value matches (`jq 'select(.route == ...)'`).
    @inline(__always)
    package static func admits(_ pattern: TextPattern?, _ value: String?) -> Bool {
        guard let pattern else { return true }
        guard let value else { return false }
        return pattern.matches(value)
    }

    /// ``admits(_:_:)`` for a field read from a line.
    @inline(__always)
    package static func admits(_ pattern: TextPattern?, _ value: RawText?) -> Bool {
        guard let pattern else { return true }
        guard let value else { return false }
        return pattern.matches(value)
    }

    /// True when the raw UTF-8 `value` matches.
    package func matches(_ value: UnsafeRawBufferPointer) -> Bool {
        let bytes = value.bindMemory(to: UInt8.self)
        if parts.count == 1 { return bytes.elementsEqual(parts[0]) }
        let first = parts[0], last = parts[parts.count - 1]
        guard bytes.count >= first.count + last.count,
              bytes.prefix(first.count).elementsEqual(first),
              bytes.suffix(last.count).elementsEqual(last) else { return false }
        var position = first.count
        let end = bytes.count - last.count
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let found = Self.find(part, in: bytes, from: position, to: end) else { return false }
            position = found + part.count
        }
        return true
    }

    private static func find(_ needle: [UInt8], in hay: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard to - from >= needle.count else { return nil }
        for i in from...(to - needle.count) where hay[i] == needle[0] {
            if hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}
