@testable import APITraceExport
import Testing

/// The writer keeps room past what it wrote and inserts nested lengths in place: these check the
/// bytes against protobuf's rules written out by hand, across growth and multi-byte lengths.
@Suite("Protobuf writer")
struct ProtobufWriterTests {
    /// A varint as protobuf spells it, built the plain way.
    static func varint(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    @Test("varint sizes", arguments: [0, 1, 127, 128, 16_383, 16_384, 1 << 35, UInt64.max] as [UInt64])
    func varintSize(value: UInt64) {
        #expect(ProtobufWriter.varintSize(value) == Self.varint(value).count)
        var w = ProtobufWriter()
        w.varint(value)
        #expect(w.finished() == Self.varint(value))
    }

    @Test("nested messages of 0, 1, 127, 128, 20,000 and 70,000 bytes get their lengths before them, with or without room reserved",
          arguments: [0, 1, 127, 128, 20_000, 70_000], [0, 2])
    func nestedLengths(length: Int, reserved: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var w = ProtobufWriter()  // small room: the message grows it
        w.int(1, 150)
        let start = w.beginMessage(2, reserving: reserved)
        payload.withUnsafeBytes { w.append($0) }
        w.endMessage(2, start: start, reserved: reserved)
        w.fixed64(3, 0x0102_0304_0506_0708)
        var expected: [UInt8] = [0x08] + Self.varint(150)
        expected += [0x12] + Self.varint(UInt64(length)) + payload
        expected += [0x19, 8, 7, 6, 5, 4, 3, 2, 1]
        #expect(w.count == expected.count)
        #expect(w.finished() == expected)
    }

    @Test("an empty message that need not be there takes its tag back; defaults are left out")
    func emptyAndDefaults() {
        var w = ProtobufWriter()
        w.string(1, "")
        w.int(2, 0)
        w.fixed64(3, 0)
        w.bool(4, false)
        w.message(5, always: false) { _ in }
        let start = w.beginMessage(9, reserving: 2)
        w.endMessage(9, start: start, reserved: 2, always: false)
        w.message(6) { _ in }
        w.stringAlways(7, "")
        w.doubleAlways(8, 0)
        #expect(w.finished() == [0x32, 0x00, 0x3a, 0x00, 0x41, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test("removeAll keeps the room and starts again; the cursor writes what the plain calls write")
    func reuse() {
        var w = ProtobufWriter()
        for _ in 0..<3 {
            w.removeAll()
            w.bytesAlways(1, StaticString("key").bytes)
            w.write(atMost: ProtobufWriter.tagAndLength * 2 + 8 + 3) { c in
                c.bytesAlways(1, StaticString("key").bytes)
                c.doubleAlways(4, 1.5)
                c.bigEndian(0x0102_0304_0506_0708)
            }
        }
        let double = Array(withUnsafeBytes(of: (1.5).bitPattern.littleEndian) { Array($0) })
        let expected: [UInt8] = [0x0a, 3] + Array("key".utf8) + [0x0a, 3] + Array("key".utf8) + [0x21] + double + [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(w.finished() == expected)
    }
}
