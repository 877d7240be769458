/// Cuts what a server chose (ids, Content-Types) before it reaches a trace event, a log line or an
/// error message: a 50 MB `id` must not make a trace line longer than readers accept, nor fill a
/// terminal on every reconnect.
package enum TraceText {
    /// Longest `last_event_id` written to a trace or log line, in UTF-8 bytes.
    package static let maximumIDBytes = 256
    /// Longest `reason` and `route`, in UTF-8 bytes.
    package static let maximumFieldBytes = 512

    /// `text` when it fits in `maximumBytes` UTF-8 bytes; else a prefix cut on a character boundary
    /// followed by `…(+N bytes)`, N being what was cut, the whole within `maximumBytes` (for a bound
    /// of 32 bytes or more).
    package static func clip(_ text: String, maximumBytes: Int) -> String {
        let utf8 = text.utf8
        let count = utf8.count
        guard count > maximumBytes else { return text }
        // The marker's length depends on N: reserve room for the largest N (count itself).
        let reserve = "…(+\(count) bytes)".utf8.count
        var keep = max(0, maximumBytes - reserve)
        var bytes = Array(utf8.prefix(keep + 1))
        // Never cut inside a multi-byte character: back off over continuation bytes (10xxxxxx).
        while keep > 0, keep < bytes.count, bytes[keep] & 0xC0 == 0x80 { keep -= 1 }
        bytes.removeSubrange(keep...)
        return String(decoding: bytes, as: UTF8.self) + "…(+\(count - keep) bytes)"
    }
}
