/// The protobuf wire format, for the handful of OTLP messages an export writes: varints,
/// length-delimited fields (strings, bytes, nested messages), fixed64 times and doubles.
///
/// A nested message is written in place and its length inserted before it once known, so a
/// request is built in one buffer. Fields are written only when set: proto3 leaves defaults out.
package struct ProtobufWriter {
    /// The encoded bytes.
    package private(set) var bytes: [UInt8] = []

    package init(reservingCapacity capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    private enum WireType: UInt8 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5
    }

    private mutating func tag(_ field: Int, _ type: WireType) { varint(UInt64(field) << 3 | UInt64(type.rawValue)) }

    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// An `int64`, `uint64`, enum or `bool` field (two's complement for negatives, as protobuf does for int64).
    package mutating func int(_ field: Int, _ value: Int64) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(UInt64(bitPattern: value))
    }

    package mutating func bool(_ field: Int, _ value: Bool) {
        guard value else { return }
        tag(field, .varint)
        bytes.append(1)
    }

    package mutating func fixed64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .fixed64)
        appendLittleEndian(value)
    }

    package mutating func double(_ field: Int, _ value: Double) {
        tag(field, .fixed64)
        appendLittleEndian(value.bitPattern)
    }

    /// A double that is written even when zero (an `optional double`, a `oneof` member).
    package mutating func doubleAlways(_ field: Int, _ value: Double) { double(field, value) }

    package mutating func string(_ field: Int, _ value: String) {
        guard !value.isEmpty else { return }
        tag(field, .lengthDelimited)
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A string written even when empty (a `oneof` member such as `AnyValue.string_value`).
    package mutating func stringAlways(_ field: Int, _ value: String) {
        tag(field, .lengthDelimited)
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    package mutating func bytesField(_ field: Int, _ value: [UInt8]) {
        guard !value.isEmpty else { return }
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A `repeated fixed64` field, packed.
    package mutating func packedFixed64(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        tag(field, .lengthDelimited)
        varint(UInt64(values.count * 8))
        for v in values { appendLittleEndian(v) }
    }

    /// A `repeated double` field, packed.
    package mutating func packedDouble(_ field: Int, _ values: [Double]) {
        guard !values.isEmpty else { return }
        tag(field, .lengthDelimited)
        varint(UInt64(values.count * 8))
        for v in values { appendLittleEndian(v.bitPattern) }
    }

    /// A nested message: `body` writes its fields, then its length is inserted before them.
    /// An empty message is still written when `always` (a `oneof` member must be present).
    package mutating func message(_ field: Int, always: Bool = true, _ body: (inout ProtobufWriter) -> Void) {
        let start = beginMessage(field)
        body(&self)
        endMessage(field, start: start, always: always)
    }

    /// Starts a nested message whose fields follow; returns where they start, for ``endMessage(_:start:always:)``.
    package mutating func beginMessage(_ field: Int) -> Int {
        tag(field, .lengthDelimited)
        return bytes.count
    }

    /// Ends the message begun at `start`: its length is inserted before its fields.
    package mutating func endMessage(_ field: Int, start: Int, always: Bool = true) {
        let length = bytes.count - start
        if length == 0, !always {
            // Take the tag back: nothing to say.
            bytes.removeLast(Self.varintSize(UInt64(field) << 3))
            return
        }
        // Most nested messages (attributes, values) are under 128 bytes: one byte, no array.
        if length < 0x80 {
            bytes.insert(UInt8(length), at: start)
            return
        }
        var prefix: (UInt64, UInt8) = (0, 0)
        var v = UInt64(length)
        withUnsafeMutableBytes(of: &prefix.0) { p in
            var n = 0
            while v >= 0x80 {
                p[n] = UInt8(truncatingIfNeeded: v) | 0x80
                v >>= 7
                n += 1
            }
            p[n] = UInt8(v)
            bytes.insert(contentsOf: UnsafeRawBufferPointer(rebasing: p[0...n]), at: start)
        }
    }

    /// Bytes as they are (an encoded part made elsewhere).
    package mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    /// A length-delimited field of raw bytes, written even when empty.
    package mutating func bytesAlways(_ field: Int, _ value: UnsafeRawBufferPointer) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A length-delimited field whose length is known before its contents: its tag and length.
    package mutating func lengthPrefix(_ field: Int, _ length: Int) {
        tag(field, .lengthDelimited)
        varint(UInt64(length))
    }

    /// Eight bytes, most significant first (ids are big-endian byte strings).
    package mutating func appendBigEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Removes every byte, keeping the room.
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Bytes a varint of `value` takes.
    package static func varintSize(_ value: UInt64) -> Int {
        var n = 1
        var v = value
        while v >= 0x80 { n += 1; v >>= 7 }
        return n
    }

    /// Bytes the tag of `field` takes.
    package static func tagSize(_ field: Int) -> Int { varintSize(UInt64(field) << 3) }

    private mutating func appendLittleEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
