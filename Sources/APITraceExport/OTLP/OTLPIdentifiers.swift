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
        var value: UInt64 = 0
        // Every request's ids go through here: two comparisons per digit, no branch per range.
        for i in offset..<offset + 16 {
            let c = text[i]
            let digit = c &- UInt8(ascii: "0")
            let letter = (c | 0x20) &- UInt8(ascii: "a")  // `A`-`F` and `a`-`f` alike; anything else lands past 5
            let v: UInt8
            if digit < 10 {
                v = digit
            } else if letter < 6 {
                v = letter + 10
            } else {
                return nil
            }
            value = value << 4 | UInt64(v)
        }
        return value
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
