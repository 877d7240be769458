@testable import APITraceExport
import Testing

/// Ids read from a trace: hex digits, eight at a time.
@Suite("OTLP ids")
struct OTLPIdentifiersTests {
    /// The digits as the reader took them one by one before it took eight at a time.
    static func reference(_ text: [UInt8]) -> (UInt64, UInt64)? {
        var halves: [UInt64] = []
        for half in 0..<2 {
            var value: UInt64 = 0
            for c in text[(half * 16)..<(half * 16 + 16)] {
                let digit = c &- UInt8(ascii: "0"), letter = (c | 0x20) &- UInt8(ascii: "a")
                guard digit < 10 || letter < 6 else { return nil }
                value = value << 4 | UInt64(digit < 10 ? digit : letter + 10)
            }
            halves.append(value)
        }
        return (halves[0], halves[1])
    }

    @Test("every byte at every position of a trace id is read as the digit-by-digit reader read it")
    func hexDigits() {
        let base = Array("4bf92f3577b34da6A3CE929D0E0E4736".utf8)
        for position in 0..<32 {
            for byte in 0...255 {
                var text = base
                text[position] = UInt8(byte)
                let id = text.withUnsafeBytes { OTLPIdentifiers.traceID($0) }
                let want = Self.reference(text)
                #expect(id.map { [$0.high, $0.low] } == want.map { [$0.0, $0.1] }, "\(position): \(byte)")
            }
        }
    }
}
