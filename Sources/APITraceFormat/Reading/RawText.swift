import Foundation

/// A string value's raw bytes inside the line being read: no allocation until asked for text.
///
/// Valid only while the line is: consumers intern or copy what they keep.
package struct RawText {
    /// The bytes between the quotes, escapes not decoded when ``hasEscapes`` is true.
    package var bytes: UnsafeRawBufferPointer
    /// True when the bytes hold backslash escapes still to decode. Always false in a ``TraceRecord``:
    /// ``TraceRecordScanner`` hands out escaped text decoded.
    package var hasEscapes: Bool

    package init(bytes: UnsafeRawBufferPointer, hasEscapes: Bool) {
        self.bytes = bytes
        self.hasEscapes = hasEscapes
    }

    /// No text.
    package static var empty: RawText { RawText(bytes: UnsafeRawBufferPointer(start: nil, count: 0), hasEscapes: false) }

    /// The decoded text (allocates; only for values kept as text).
    package var string: String {
        if hasEscapes { return JSONScanner.unescape(bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True when the decoded value equals `text`.
    package func equals(text: String) -> Bool {
        if hasEscapes { return string == text }
        var text = text
        return text.withUTF8 { t in t.count == bytes.count && (t.isEmpty || memcmp(t.baseAddress!, bytes.baseAddress!, t.count) == 0) }
    }
}
