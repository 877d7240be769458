/// The ``OTLPItemSink`` that makes values: the ``OTLPSpan`` or ``OTLPLogRecord`` of one event.
struct OTLPItemBuilder: OTLPItemSink {
    /// The item once ended.
    private(set) var item: OTLPMapping.Item?
    private var span: OTLPSpan?
    private var log: OTLPLogRecord?
    private var attributes: [OTLPAttribute] = []
    private var events: [OTLPSpan.Event] = []

    private static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

    mutating func beginSpan(traceID: OTLPIdentifiers.TraceID, spanID: UInt64, name: UnsafeRawBufferPointer, start: UInt64, end: UInt64) {
        span = OTLPSpan(
            traceID: traceID.bytes, spanID: OTLPIdentifiers.bytes(spanID), name: Self.text(name), kind: .client,
            startTimeUnixNano: start, endTimeUnixNano: end, attributes: [], events: [], status: .unset, statusMessage: "")
    }

    mutating func beginLog(time: UInt64, severity: Int, severityText: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        log = OTLPLogRecord(
            timeUnixNano: time, severityNumber: severity, severityText: Self.text(severityText), body: Self.text(body),
            eventName: "", attributes: [], traceID: [], spanID: [])
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, string value: UnsafeRawBufferPointer) {
        attributes.append(OTLPAttribute(Self.text(key), .string(Self.text(value))))
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, int value: Int64) { attributes.append(OTLPAttribute(Self.text(key), .int(value))) }

    mutating func attribute(_ key: UnsafeRawBufferPointer, double value: Double) {
        attributes.append(OTLPAttribute(Self.text(key), .double(value)))
    }

    mutating func attribute(_ key: UnsafeRawBufferPointer, bool value: Bool) { attributes.append(OTLPAttribute(Self.text(key), .bool(value))) }

    mutating func spanEvent(time: UInt64, name: StaticString, durationMs: Double) {
        events.append(OTLPSpan.Event(timeUnixNano: time, name: "\(name)", attributes: [OTLPAttribute("apitrace.duration_ms", .double(durationMs))]))
    }

    mutating func endSpan(status: OTLPSpan.StatusCode, message: UnsafeRawBufferPointer) {
        guard var span else { return }
        span.attributes = attributes
        span.events = events
        span.status = status
        span.statusMessage = Self.text(message)
        item = .span(span)
    }

    mutating func endLog(traceID: OTLPIdentifiers.TraceID?, spanID: UInt64?, eventName: StaticString) {
        guard var log else { return }
        log.attributes = attributes
        log.traceID = traceID?.bytes ?? []
        log.spanID = spanID.map(OTLPIdentifiers.bytes) ?? []
        log.eventName = "\(eventName)"
        item = .log(log)
    }
}
