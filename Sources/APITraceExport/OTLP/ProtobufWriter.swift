/// The protobuf wire format, for the handful of OTLP messages an export writes: varints,
/// length-delimited fields (strings, bytes, nested messages), fixed64 times and doubles.
///
/// A nested message is written in place and its length inserted before it once known, so a
/// request is built in one buffer. Fields are written only when set: proto3 leaves defaults out.
///
/// The buffer keeps spare room past ``count``, and each field is written through one pointer
/// (``write(atMost:_:)``) after one check of room: an export writes about 300 bytes per span in
/// some 40 fields, and appending them to an array byte by byte (a uniqueness and a capacity check
/// each) was a tenth of its CPU time.
package struct ProtobufWriter {
    /// `storage[..<count]` is what was written; the rest is room.
    private var storage: [UInt8]
    /// Bytes written.
    package private(set) var count = 0

    package init(reservingCapacity capacity: Int = 0) {
        // The room is not zeroed: every byte up to ``count`` is written before it is read, and the
        // rest is cut off (``finished()``). A request's buffer is a few megabytes, made once per
        // batch, and filling it with zeros first was 1.5% of the export's CPU.
        let size = max(64, capacity)
        storage = [UInt8](unsafeUninitializedCapacity: size) { _, initialized in initialized = size }
    }

    package enum WireType: UInt64 {
        case varint = 0, fixed64 = 1, lengthDelimited = 2, fixed32 = 5
    }

    /// Writes at the end of the buffer, without checks: ``ProtobufWriter/write(atMost:_:)`` made room first.
    package struct Cursor {
        fileprivate var position: UnsafeMutablePointer<UInt8>

        @inline(__always)
        package mutating func byte(_ value: UInt8) {
            position.pointee = value
            position += 1
        }

        @inline(__always)
        package mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                byte(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            byte(UInt8(v))
        }

        @inline(__always)
        package mutating func tag(_ field: Int, _ type: WireType) { varint(UInt64(field) << 3 | type.rawValue) }

        /// A length-delimited field's tag and length.
        @inline(__always)
        package mutating func lengthPrefix(_ field: Int, _ length: Int) {
            tag(field, .lengthDelimited)
            varint(UInt64(length))
        }

        /// A length-delimited field of raw bytes, written even when empty.
        @inline(__always)
        package mutating func bytesAlways(_ field: Int, _ value: UnsafeRawBufferPointer) {
            lengthPrefix(field, value.count)
            append(value)
        }

        @inline(__always)
        package mutating func append(_ raw: UnsafeRawBufferPointer) {
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            UnsafeMutableRawPointer(position).copyMemory(from: base, byteCount: raw.count)
            position += raw.count
        }

        @inline(__always)
        package mutating func littleEndian(_ value: UInt64) {
            UnsafeMutableRawPointer(position).storeBytes(of: value.littleEndian, as: UInt64.self)
            position += 8
        }

        /// Eight bytes, most significant first (ids are big-endian byte strings).
        @inline(__always)
        package mutating func bigEndian(_ value: UInt64) {
            UnsafeMutableRawPointer(position).storeBytes(of: value.bigEndian, as: UInt64.self)
            position += 8
        }

        /// A fixed64 field, left out when zero.
        @inline(__always)
        package mutating func fixed64(_ field: Int, _ value: UInt64) {
            guard value != 0 else { return }
            tag(field, .fixed64)
            littleEndian(value)
        }

        /// A double field, written even when zero.
        @inline(__always)
        package mutating func doubleAlways(_ field: Int, _ value: Double) {
            tag(field, .fixed64)
            littleEndian(value.bitPattern)
        }

        /// A varint field (`int64`, enum), left out when zero.
        @inline(__always)
        package mutating func int(_ field: Int, _ value: Int64) {
            guard value != 0 else { return }
            tag(field, .varint)
            varint(UInt64(bitPattern: value))
        }
    }

    /// Most bytes a field's tag and a length (or any varint) take.
    package static let tagAndLength = 20

    /// Writes at most `maximum` bytes through `body`'s cursor (a larger write is a bug: asserted).
    @inline(__always)
    package mutating func write(atMost maximum: Int, _ body: (inout Cursor) -> Void) {
        if storage.count - count < maximum { grow(maximum) }
        let start = count
        count = storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var cursor = Cursor(position: base + start)
            body(&cursor)
            assert(cursor.position - (base + start) <= maximum, "a protobuf write past the room it asked for")
            return cursor.position - base
        }
    }

    @inline(never)
    private mutating func grow(_ more: Int) {
        let size = max(count + more, storage.count * 2)
        storage.append(contentsOf: repeatElement(0, count: size - storage.count))
    }

    package mutating func varint(_ value: UInt64) { write(atMost: 10) { $0.varint(value) } }

    /// An `int64`, `uint64`, enum or `bool` field (two's complement for negatives, as protobuf does for int64).
    package mutating func int(_ field: Int, _ value: Int64) {
        guard value != 0 else { return }
        write(atMost: Self.tagAndLength) { $0.int(field, value) }
    }

    package mutating func bool(_ field: Int, _ value: Bool) {
        guard value else { return }
        write(atMost: Self.tagAndLength) {
            $0.tag(field, .varint)
            $0.byte(1)
        }
    }

    package mutating func fixed64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        write(atMost: Self.tagAndLength + 8) { $0.fixed64(field, value) }
    }

    package mutating func double(_ field: Int, _ value: Double) {
        write(atMost: Self.tagAndLength + 8) { $0.doubleAlways(field, value) }
    }

    /// A double that is written even when zero (an `optional double`, a `oneof` member).
    package mutating func doubleAlways(_ field: Int, _ value: Double) { double(field, value) }

    package mutating func string(_ field: Int, _ value: String) {
        guard !value.isEmpty else { return }
        stringAlways(field, value)
    }

    /// A string written even when empty (a `oneof` member such as `AnyValue.string_value`).
    package mutating func stringAlways(_ field: Int, _ value: String) {
        var value = value
        value.withUTF8 { bytesAlways(field, UnsafeRawBufferPointer($0)) }
    }

    package mutating func bytesField(_ field: Int, _ value: [UInt8]) {
        guard !value.isEmpty else { return }
        value.withUnsafeBytes { bytesAlways(field, $0) }
    }

    /// A `repeated fixed64` field, packed.
    package mutating func packedFixed64(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        write(atMost: Self.tagAndLength + values.count * 8) { c in
            c.lengthPrefix(field, values.count * 8)
            for v in values { c.littleEndian(v) }
        }
    }

    /// A `repeated double` field, packed.
    package mutating func packedDouble(_ field: Int, _ values: [Double]) {
        guard !values.isEmpty else { return }
        write(atMost: Self.tagAndLength + values.count * 8) { c in
            c.lengthPrefix(field, values.count * 8)
            for v in values { c.littleEndian(v.bitPattern) }
        }
    }

    /// A nested message: `body` writes its fields, then its length is inserted before them.
    /// An empty message is still written when `always` (a `oneof` member must be present).
    package mutating func message(_ field: Int, always: Bool = true, _ body: (inout ProtobufWriter) -> Void) {
        let start = beginMessage(field)
        body(&self)
        endMessage(field, start: start, always: always)
    }

    /// Starts a nested message whose fields follow; returns where they start, for ``endMessage(_:start:reserved:always:)``.
    /// With `reserving`, room for a length of that many bytes is left before the fields, so that a
    /// message whose length takes as many (a span's, 128 bytes to 16 KiB: 2) is not moved to insert it.
    package mutating func beginMessage(_ field: Int, reserving reserved: Int = 0) -> Int {
        write(atMost: Self.tagAndLength + reserved) { c in
            c.tag(field, .lengthDelimited)
            c.position += reserved
        }
        return count
    }

    /// Ends the message begun at `start` (with `reserved` bytes of room before it): its length is
    /// written before its fields, which move only when it takes another number of bytes than reserved.
    package mutating func endMessage(_ field: Int, start: Int, reserved: Int = 0, always: Bool = true) {
        let length = count - start
        if length == 0, !always {
            // Take the tag back: nothing to say.
            count -= Self.varintSize(UInt64(field) << 3) + reserved
            return
        }
        let prefix = Self.varintSize(UInt64(length))
        if prefix > reserved, storage.count - count < prefix - reserved { grow(prefix - reserved) }
        storage.withUnsafeMutableBufferPointer { buffer in
            let at = buffer.baseAddress! + start
            if prefix != reserved {
                UnsafeMutableRawPointer(at + prefix - reserved).copyMemory(from: at, byteCount: length)  // memmove: the ranges overlap
            }
            var cursor = Cursor(position: at - reserved)
            cursor.varint(UInt64(length))
        }
        count += prefix - reserved
    }

    /// Bytes as they are (an encoded part made elsewhere).
    package mutating func append(_ raw: UnsafeRawBufferPointer) { write(atMost: raw.count) { $0.append(raw) } }

    /// A length-delimited field of raw bytes, written even when empty.
    package mutating func bytesAlways(_ field: Int, _ value: UnsafeRawBufferPointer) {
        write(atMost: Self.tagAndLength + value.count) { $0.bytesAlways(field, value) }
    }

    /// A length-delimited field whose length is known before its contents: its tag and length.
    package mutating func lengthPrefix(_ field: Int, _ length: Int) {
        write(atMost: Self.tagAndLength) { $0.lengthPrefix(field, length) }
    }

    /// Eight bytes, most significant first (ids are big-endian byte strings).
    package mutating func appendBigEndian(_ value: UInt64) { write(atMost: 8) { $0.bigEndian(value) } }

    /// The bytes written so far, for the duration of `body`.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// The bytes written, as an array (the buffer itself, its room cut off).
    package consuming func finished() -> [UInt8] {
        storage.removeLast(storage.count - count)
        return storage
    }

    /// Removes every byte, keeping the room.
    package mutating func removeAll() { count = 0 }

    /// Bytes a varint of `value` takes.
    @inline(__always)
    package static func varintSize(_ value: UInt64) -> Int { (64 - (value | 1).leadingZeroBitCount + 6) / 7 }

    /// Bytes the tag of `field` takes.
    package static func tagSize(_ field: Int) -> Int { varintSize(UInt64(field) << 3) }
}
