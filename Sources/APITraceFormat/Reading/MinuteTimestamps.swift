/// Parses the `ts` of line after line, reusing the last minute when the text starts the same (the
/// common case: `2026-11-22T10:00:07.123Z` after `2026-11-22T10:00:06.871Z`), so most lines cost a
/// compare and five digits instead of a calendar computation. Accepts exactly what
/// ``TraceTimestamp/parse(_:)`` accepts.
package struct MinuteTimestamps {
    private var minutePrefix: (UInt64, UInt64) = (0, 0)
    private var minuteMs: Int64 = 0

    package init() {}

    /// Milliseconds since 1970 of an RFC 3339 timestamp, or nil when ``TraceTimestamp/parse(_:)`` refuses it.
    @inline(__always)
    package mutating func milliseconds(_ b: UnsafeRawBufferPointer) -> Int64? {
        if b.count == 24, b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "."), b[23] == UInt8(ascii: "Z") {
            let prefix = (b.loadUnaligned(fromByteOffset: 0, as: UInt64.self), b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let s1 = b[17] &- 48, s2 = b[18] &- 48, m1 = b[20] &- 48, m2 = b[21] &- 48, m3 = b[22] &- 48
            let withinMinute = Int64(s1) * 10_000 + Int64(s2) * 1000 + Int64(m1) * 100 + Int64(m2) * 10 + Int64(m3)
            if prefix == minutePrefix, minuteMs > 0, s1 < 6, s2 < 10, m1 < 10, m2 < 10, m3 < 10 {
                return minuteMs + withinMinute
            }
            guard let t = TraceTimestamp.parse(b) else { return nil }
            if s1 < 6, s2 < 10, m1 < 10, m2 < 10, m3 < 10 {
                minutePrefix = prefix
                minuteMs = t.millisecondsSince1970 - withinMinute
            }
            return t.millisecondsSince1970
        }
        return TraceTimestamp.parse(b)?.millisecondsSince1970
    }
}
