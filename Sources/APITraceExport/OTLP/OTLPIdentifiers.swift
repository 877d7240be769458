import APITraceFormat

/// Trace and span ids for OTLP: the event's own when they are valid W3C ids, otherwise derived
/// from the event's content, so that exporting the same event twice gives the same ids (a
/// receiver that sees a resent span replaces it rather than showing two).
enum OTLPIdentifiers {
    /// A trace id: 16 bytes, as two big-endian halves.
    struct TraceID: Equatable {
        var high: UInt64
        var low: UInt64
        var bytes: [UInt8] { OTLPIdentifiers.bytes(high) + OTLPIdentifiers.bytes(low) }
    }

    /// The 16 bytes of a 32-hex-digit, non-zero trace id; nil for anything else.
    static func traceID(_ text: UnsafeRawBufferPointer?) -> TraceID? {
        guard let text, text.count == 32, let high = hex(text, from: 0), let low = hex(text, from: 16), high | low != 0 else { return nil }
        return TraceID(high: high, low: low)
    }

    /// The 8 bytes of a 16-hex-digit, non-zero span id; nil for anything else.
    static func spanID(_ text: UnsafeRawBufferPointer?) -> UInt64? {
        guard let text, text.count == 16, let id = hex(text, from: 0), id != 0 else { return nil }
        return id
    }

    /// 16 hex digits from `offset` as a number; nil at anything else.
    private static func hex(_ text: UnsafeRawBufferPointer, from offset: Int) -> UInt64? {
        // Every request's ids go through here: eight digits at a time, in the bits of a word.
        guard let high = hex8(text.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
              let low = hex8(text.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)) else { return nil }
        return high << 32 | low
    }

    /// The value of eight hex digits (`0`-`9`, `a`-`f`, `A`-`F`), the first in the lowest byte of
    /// `raw` as loaded from memory; nil when any byte is not one.
    @inline(__always)
    private static func hex8(_ raw: UInt64) -> UInt64? {
        let w = UInt64(littleEndian: raw)
        let ones: UInt64 = 0x0101_0101_0101_0101, highs = ones &* 0x80
        // Below 0x80 each byte stays within its lane in the sums below.
        guard w & highs == 0 else { return nil }
        // The high bit of each lane marks a byte from `lo` to `hi`: `x + (0x80 - lo)` reaches 0x80
        // and `x + (0x7F - hi)` does not.
        let digits = (w &+ ones &* 0x50) & ~(w &+ ones &* 0x46) & highs  // 0x30 ... 0x39
        let lower = w | ones &* 0x20  // `A`-`F` as `a`-`f`
        let letters = (lower &+ ones &* 0x1F) & ~(lower &+ ones &* 0x19) & highs  // 0x61 ... 0x66
        guard digits | letters == highs else { return nil }
        // Each lane's value: its low four bits, plus 9 for a letter (`a` is 0x61: 1 + 9).
        var v = ((w & (ones &* 0x0F)) &+ (letters >> 7) &* 9).byteSwapped  // the first digit highest
        v = (v | v >> 4) & 0x00FF_00FF_00FF_00FF
        v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF
        v = (v | v >> 16) & 0x0000_0000_FFFF_FFFF
        return v
    }

    /// Mixes `value` into the FNV-1a hash `h`, byte by byte.
    static func mix(_ h: inout UInt64, _ value: UInt64) {
        var v = value
        for _ in 0..<8 {
            h ^= v & 0xff
            h = h &* 0x0000_0100_0000_01b3
            v >>= 8
        }
    }

    /// Mixes a text's UTF-8 bytes and a separator into `h`.
    static func mix(_ h: inout UInt64, _ text: UnsafeRawBufferPointer?) {
        if let text {
            for b in text {
                h ^= UInt64(b)
                h = h &* 0x0000_0100_0000_01b3
            }
        }
        h ^= 0xff
        h = h &* 0x0000_0100_0000_01b3
    }

    static func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// Lowercase hex, as OTLP JSON writes ids.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
