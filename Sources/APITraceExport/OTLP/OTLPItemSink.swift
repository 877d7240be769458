import APITraceFormat

/// Where ``OTLPMapping`` puts what one event becomes, field by field in the order the protobuf
/// messages hold them: a span's ids, name and times, its attributes, its events, its status; a log
/// record's time, severity and body, its attributes, its ids and event name.
///
/// Two sinks take the one mapping: ``OTLPProtobufItemWriter`` encodes straight into a request's
/// bytes (the export's path: no ``OTLPSpan``, no attribute arrays), ``OTLPItemBuilder`` makes the
/// ``OTLPSpan`` and ``OTLPLogRecord`` values (``OTLPMapping/map(_:)``, the JSON encoding). Texts are
/// UTF-8 bytes valid only during the call.
protocol OTLPItemSink {
    /// Starts a span: what comes before its attributes.
    mutating func beginSpan(traceID: OTLPIdentifiers.TraceID, spanID: UInt64, name: UnsafeRawBufferPointer, start: UInt64, end: UInt64)
    /// Starts a log record: what comes before its attributes.
    mutating func beginLog(time: UInt64, severity: Int, severityText: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer)
    /// An attribute of the item begun last.
    mutating func attribute(_ key: UnsafeRawBufferPointer, string value: UnsafeRawBufferPointer)
    mutating func attribute(_ key: UnsafeRawBufferPointer, int value: Int64)
    mutating func attribute(_ key: UnsafeRawBufferPointer, double value: Double)
    mutating func attribute(_ key: UnsafeRawBufferPointer, bool value: Bool)
    /// An event of the span begun last (after its attributes), with its one attribute `apitrace.duration_ms`.
    mutating func spanEvent(time: UInt64, name: StaticString, durationMs: Double)
    /// Ends the span with its status.
    mutating func endSpan(status: OTLPSpan.StatusCode, message: UnsafeRawBufferPointer)
    /// Ends the log record with the trace and span ids it belongs to, if any.
    mutating func endLog(traceID: OTLPIdentifiers.TraceID?, spanID: UInt64?, eventName: StaticString)
}

extension StaticString {
    /// The text's bytes (static: valid for ever).
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: utf8Start, count: utf8CodeUnitCount) }
}

extension OTLPItemSink {
    mutating func attribute(_ key: StaticString, _ value: RawText?) {
        if let value { attribute(key.bytes, string: value.bytes) }
    }

    mutating func attribute(_ key: StaticString, _ value: UnsafeRawBufferPointer?) {
        if let value { attribute(key.bytes, string: value) }
    }

    mutating func attribute(_ key: StaticString, _ value: StaticString) { attribute(key.bytes, string: value.bytes) }

    mutating func attribute(_ key: StaticString, _ value: String?) {
        guard var value else { return }
        value.withUTF8 { attribute(key.bytes, string: UnsafeRawBufferPointer($0)) }
    }

    mutating func attribute(_ key: StaticString, _ value: Int64?) {
        if let value { attribute(key.bytes, int: value) }
    }

    mutating func attribute(_ key: StaticString, _ value: Int?) {
        if let value { attribute(key.bytes, int: Int64(value)) }
    }

    mutating func attribute(_ key: StaticString, _ value: Double?) {
        if let value { attribute(key.bytes, double: value) }
    }

    mutating func attribute(_ key: StaticString, _ value: Bool?) {
        if let value { attribute(key.bytes, bool: value) }
    }

    /// An attribute whose key is `prefix` followed by `suffix` (`apitrace.log.metadata.<key>`).
    mutating func attribute(_ prefix: StaticString, suffix: String, _ value: String) {
        var key = Array(prefix.bytes)
        key.append(contentsOf: suffix.utf8)
        var value = value
        key.withUnsafeBytes { k in value.withUTF8 { attribute(k, string: UnsafeRawBufferPointer($0)) } }
    }
}
