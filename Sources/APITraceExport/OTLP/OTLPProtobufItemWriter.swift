/// The ``OTLPItemSink`` that encodes: each span as a `Span` (field 2 of a `ScopeSpans`), each log
/// record as a `LogRecord` (field 2 of a `ScopeLogs`), appended to ``writer``, byte for byte what
/// ``OTLPProtobufEncoding`` writes for the same ``OTLPSpan`` or ``OTLPLogRecord``.
///
/// Attributes and span events are written with their lengths computed first, so only the item's
/// own length is written once it is known (in the two bytes left for it, which most items need);
/// each attribute is one write into the buffer
/// (``ProtobufWriter/write(atMost:_:)``).
struct OTLPProtobufItemWriter: OTLPItemSink {
    /// The encoded items of one resource.
    var writer = ProtobufWriter()
    /// About how many bytes of text the items hold, counted as ``OTLPBatch/approximateBytes`` counts
    /// them, so batches are cut where they were cut from values.
    private(set) var approximateBytes = 0
    private var itemStart = 0
    /// Field number of the current item's attributes (9 in a span, 6 in a log record).
    private var attributeField = 9

    mutating func beginSpan(traceID: OTLPIdentifiers.TraceID, spanID: UInt64, name: UnsafeRawBufferPointer, start: UInt64, end: UInt64) {
        itemStart = writer.beginMessage(2, reserving: 2)
        attributeField = 9
        writer.write(atMost: 6 * ProtobufWriter.tagAndLength + 40 + name.count) { c in
            c.lengthPrefix(1, 16)
            c.bigEndian(traceID.high)
            c.bigEndian(traceID.low)
            c.lengthPrefix(2, 8)
            c.bigEndian(spanID)
            if name.count > 0 { c.bytesAlways(5, name) }
            c.int(6, Int64(OTLPSpan.Kind.client.rawValue))
            c.fixed64(7, start)
            c.fixed64(8, end)
        }
        approximateBytes += 64 + name.count
    }

    mutating func beginLog(time: UInt64, severity: Int, severityText: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        itemStart = writer.beginMessage(2, reserving: 2)
        attributeField = 6
        writer.write(atMost: 5 * ProtobufWriter.tagAndLength + 8 + severityText.count + body.count) { c in
            c.fixed64(1, time)
            c.int(2, Int64(severity))
            if severityText.count > 0 { c.bytesAlways(3, severityText) }
            // body: an AnyValue holding the string, written even when empty.
            c.lengthPrefix(5, ProtobufWriter.tagSize(1) + ProtobufWriter.varintSize(UInt64(body.count)) + body.count)
            c.bytesAlways(1, body)
        }
        approximateBytes += 64 + body.count
    }

    /// Room a `KeyValue` takes besides its key and its value's own bytes.
    private static let keyValueRoom = 4 * ProtobufWriter.tagAndLength

    /// A `KeyValue` whose `AnyValue` body takes `valueLength` bytes, up to that body.
    @inline(__always)
    private static func keyValue(_ c: inout ProtobufWriter.Cursor, _ field: Int, _ key: UnsafeRawBufferPointer, valueLength: Int) {
        let keyPart = key.count > 0 ? 1 + ProtobufWriter.varintSize(UInt64(key.count)) + key.count : 0
        let valuePart = 1 + ProtobufWriter.varintSize(UInt64(valueLength)) + valueLength
        c.lengthPrefix(field, keyPart + valuePart)
        if key.count > 0 { c.bytesAlways(1, key) }
        c.lengthPrefix(2, valueLength)
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, string value: UnsafeRawBufferPointer) {
        let field = attributeField
        writer.write(atMost: Self.keyValueRoom + key.count + value.count) { c in
            Self.keyValue(&c, field, key, valueLength: 1 + ProtobufWriter.varintSize(UInt64(value.count)) + value.count)
            c.bytesAlways(1, value)
        }
        approximateBytes += 8 + key.count + value.count
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, int value: Int64) {
        let field = attributeField
        writer.write(atMost: Self.keyValueRoom + key.count) { c in
            Self.keyValue(&c, field, key, valueLength: 1 + ProtobufWriter.varintSize(UInt64(bitPattern: value)))
            c.varint(3 << 3)
            c.varint(UInt64(bitPattern: value))
        }
        approximateBytes += 16 + key.count
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, double value: Double) {
        let field = attributeField
        writer.write(atMost: Self.keyValueRoom + key.count + 8) { c in
            Self.keyValue(&c, field, key, valueLength: 9)
            c.doubleAlways(4, value)
        }
        approximateBytes += 16 + key.count
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, bool value: Bool) {
        let field = attributeField
        writer.write(atMost: Self.keyValueRoom + key.count) { c in
            Self.keyValue(&c, field, key, valueLength: 2)
            // A oneof member is written even when false.
            c.varint(2 << 3)
            c.varint(value ? 1 : 0)
        }
        approximateBytes += 16 + key.count
    }

    mutating func spanEvent(time: UInt64, name: StaticString, durationMs: Double) {
        let key: StaticString = "apitrace.duration_ms"
        let attribute = 1 + 1 + key.utf8CodeUnitCount + 1 + 1 + 9
        let timePart = time == 0 ? 0 : 9
        let namePart = name.utf8CodeUnitCount == 0 ? 0 : 1 + ProtobufWriter.varintSize(UInt64(name.utf8CodeUnitCount)) + name.utf8CodeUnitCount
        writer.write(atMost: 3 * ProtobufWriter.tagAndLength + 8 + name.utf8CodeUnitCount + Self.keyValueRoom + key.utf8CodeUnitCount + 8) { c in
            c.lengthPrefix(11, timePart + namePart + 1 + ProtobufWriter.varintSize(UInt64(attribute)) + attribute)
            c.fixed64(1, time)
            if name.utf8CodeUnitCount > 0 { c.bytesAlways(2, name.bytes) }
            Self.keyValue(&c, 3, key.bytes, valueLength: 9)
            c.doubleAlways(4, durationMs)
        }
        approximateBytes += 32 + 16 + key.utf8CodeUnitCount
    }

    mutating func endSpan(status: OTLPSpan.StatusCode, message: UnsafeRawBufferPointer) {
        let messagePart = message.count == 0 ? 0 : 1 + ProtobufWriter.varintSize(UInt64(message.count)) + message.count
        let codePart = status.rawValue == 0 ? 0 : 1 + ProtobufWriter.varintSize(UInt64(status.rawValue))
        if messagePart + codePart > 0 {
            writer.write(atMost: 3 * ProtobufWriter.tagAndLength + message.count) { c in
                c.lengthPrefix(15, messagePart + codePart)
                if message.count > 0 { c.bytesAlways(2, message) }
                c.int(3, Int64(status.rawValue))
            }
        }
        writer.endMessage(2, start: itemStart, reserved: 2)
    }

    mutating func endLog(traceID: OTLPIdentifiers.TraceID?, spanID: UInt64?, eventName: StaticString) {
        writer.write(atMost: 3 * ProtobufWriter.tagAndLength + 24 + eventName.utf8CodeUnitCount) { c in
            if let traceID {
                c.lengthPrefix(9, 16)
                c.bigEndian(traceID.high)
                c.bigEndian(traceID.low)
            }
            if let spanID {
                c.lengthPrefix(10, 8)
                c.bigEndian(spanID)
            }
            if eventName.utf8CodeUnitCount > 0 { c.bytesAlways(12, eventName.bytes) }
        }
        writer.endMessage(2, start: itemStart, reserved: 2)
    }

    /// Forgets the items, keeping the room.
    mutating func removeAll() {
        writer.removeAll()
        approximateBytes = 0
    }
}
