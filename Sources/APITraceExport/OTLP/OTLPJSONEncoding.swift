import APITraceFormat

/// The OTLP JSON encoding (the protobuf JSON mapping with OTLP's exceptions): lowerCamelCase
/// names, trace and span ids as lowercase hex, 64-bit integers as decimal strings, enums as integers.
public enum OTLPJSONEncoding {
    /// An `ExportTraceServiceRequest` of the batch's spans.
    public static func traces(_ batch: OTLPBatch) -> [UInt8] {
        envelope("resourceSpans", "scopeSpans", "spans", batch.spans.map { ($0.resource, $0.spans) }) { encode($0, into: &$1) }
    }

    /// An `ExportLogsServiceRequest` of the batch's log records.
    public static func logs(_ batch: OTLPBatch) -> [UInt8] {
        envelope("resourceLogs", "scopeLogs", "logRecords", batch.logs.map { ($0.resource, $0.records) }) { encode($0, into: &$1) }
    }

    /// One request of the per-resource, one-scope shape traces and logs share.
    private static func envelope<Item>(
        _ resourceKey: StaticString, _ scopeKey: StaticString, _ itemsKey: StaticString, _ groups: [(OTLPResource, [Item])],
        _ encodeItem: (Item, inout Writer) -> Void
    ) -> [UInt8] {
        var o = Writer()
        o.raw("{\""); o.raw(resourceKey); o.raw("\":[")
        for (g, (groupResource, items)) in groups.enumerated() {
            if g > 0 { o.raw(",") }
            o.raw("{")
            resource(groupResource, into: &o)
            o.raw(",\""); o.raw(scopeKey); o.raw("\":[{")
            scope(into: &o)
            o.raw(",\""); o.raw(itemsKey); o.raw("\":[")
            for (i, item) in items.enumerated() {
                if i > 0 { o.raw(",") }
                encodeItem(item, &o)
            }
            o.raw("]}]}")
        }
        o.raw("]}")
        return o.bytes
    }

    /// An `ExportMetricsServiceRequest`: each resource's metrics, points from `start` to `time` (ns since 1970).
    public static func metrics(_ groups: [(resource: OTLPResource, metrics: [OTLPMetric])], start: UInt64, time: UInt64) -> [UInt8] {
        var o = Writer()
        o.raw("{\"resourceMetrics\":[")
        for (g, group) in groups.enumerated() {
            if g > 0 { o.raw(",") }
            o.raw("{")
            resource(group.resource, into: &o)
            o.raw(",\"scopeMetrics\":[{")
            scope(into: &o)
            o.raw(",\"metrics\":[")
            for (i, metric) in group.metrics.enumerated() {
                if i > 0 { o.raw(",") }
                encode(metric, start: start, time: time, into: &o)
            }
            o.raw("]}]}")
        }
        o.raw("]}")
        return o.bytes
    }

    /// A small JSON writer: strings escaped by the format module's one JSON string writer.
    struct Writer {
        var output = JSONOutput()
        var bytes: [UInt8] { output.bytes }
        mutating func raw(_ text: StaticString) {
            output.bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        mutating func string(_ value: String) { output.appendString(value) }
        mutating func uint(_ value: UInt64) {
            output.bytes.append(UInt8(ascii: "\""))
            output.bytes.append(contentsOf: String(value).utf8)
            output.bytes.append(UInt8(ascii: "\""))
        }
        mutating func int(_ value: Int64) { output.bytes.append(contentsOf: String(value).utf8) }
        mutating func double(_ value: Double) {
            // JSON has no infinities or NaN; protobuf JSON writes them as strings.
            if value.isNaN { raw("\"NaN\"") }
            else if value == .infinity { raw("\"Infinity\"") }
            else if value == -.infinity { raw("\"-Infinity\"") }
            else { output.bytes.append(contentsOf: "\(value)".utf8) }
        }
    }

    private static func resource(_ resource: OTLPResource, into o: inout Writer) {
        o.raw("\"resource\":{")
        attributes(resource.attributes, into: &o)
        o.raw("}")
    }

    private static func scope(into o: inout Writer) {
        o.raw("\"scope\":{\"name\":")
        o.string(OTLPScope.name)
        o.raw("}")
    }

    /// `"attributes":[...]`
    private static func attributes(_ attributes: [OTLPAttribute], into o: inout Writer) {
        o.raw("\"attributes\":[")
        for (i, a) in attributes.enumerated() {
            if i > 0 { o.raw(",") }
            o.raw("{\"key\":")
            o.string(a.key)
            o.raw(",\"value\":{")
            switch a.value {
            case .string(let s):
                o.raw("\"stringValue\":")
                o.string(s)
            case .bool(let b): o.raw(b ? "\"boolValue\":true" : "\"boolValue\":false")
            case .int(let v):
                o.raw("\"intValue\":\"")
                o.int(v)
                o.raw("\"")
            case .double(let d):
                o.raw("\"doubleValue\":")
                o.double(d)
            }
            o.raw("}}")
        }
        o.raw("]")
    }

    private static func encode(_ span: OTLPSpan, into o: inout Writer) {
        o.raw("{\"traceId\":")
        o.string(OTLPIdentifiers.hex(span.traceID))
        o.raw(",\"spanId\":")
        o.string(OTLPIdentifiers.hex(span.spanID))
        o.raw(",\"name\":")
        o.string(span.name)
        o.raw(",\"kind\":")
        o.int(Int64(span.kind.rawValue))
        o.raw(",\"startTimeUnixNano\":")
        o.uint(span.startTimeUnixNano)
        o.raw(",\"endTimeUnixNano\":")
        o.uint(span.endTimeUnixNano)
        o.raw(",")
        attributes(span.attributes, into: &o)
        o.raw(",\"events\":[")
        for (i, event) in span.events.enumerated() {
            if i > 0 { o.raw(",") }
            o.raw("{\"timeUnixNano\":")
            o.uint(event.timeUnixNano)
            o.raw(",\"name\":")
            o.string(event.name)
            o.raw(",")
            attributes(event.attributes, into: &o)
            o.raw("}")
        }
        o.raw("],\"status\":{")
        if span.status != .unset {
            o.raw("\"code\":")
            o.int(Int64(span.status.rawValue))
            if !span.statusMessage.isEmpty {
                o.raw(",\"message\":")
                o.string(span.statusMessage)
            }
        }
        o.raw("}}")
    }

    private static func encode(_ record: OTLPLogRecord, into o: inout Writer) {
        o.raw("{\"timeUnixNano\":")
        o.uint(record.timeUnixNano)
        o.raw(",\"severityNumber\":")
        o.int(Int64(record.severityNumber))
        o.raw(",\"severityText\":")
        o.string(record.severityText)
        o.raw(",\"body\":{\"stringValue\":")
        o.string(record.body)
        o.raw("},")
        attributes(record.attributes, into: &o)
        if !record.traceID.isEmpty {
            o.raw(",\"traceId\":")
            o.string(OTLPIdentifiers.hex(record.traceID))
        }
        if !record.spanID.isEmpty {
            o.raw(",\"spanId\":")
            o.string(OTLPIdentifiers.hex(record.spanID))
        }
        o.raw(",\"eventName\":")
        o.string(record.eventName)
        o.raw("}")
    }

    private static func encode(_ metric: OTLPMetric, start: UInt64, time: UInt64, into o: inout Writer) {
        o.raw("{\"name\":")
        o.string(metric.name)
        o.raw(",\"description\":")
        o.string(metric.description)
        o.raw(",\"unit\":")
        o.string(metric.unit)
        switch metric.data {
        case .sum(let points, let monotonic):
            o.raw(",\"sum\":{\"dataPoints\":[")
            for (i, p) in points.enumerated() {
                if i > 0 { o.raw(",") }
                o.raw("{\"startTimeUnixNano\":")
                o.uint(start)
                o.raw(",\"timeUnixNano\":")
                o.uint(time)
                o.raw(",\"asDouble\":")
                o.double(p.value)
                o.raw(",")
                attributes(p.attributes, into: &o)
                o.raw("}")
            }
            o.raw("],\"aggregationTemporality\":2,\"isMonotonic\":")
            o.raw(monotonic ? "true}}" : "false}}")
        case .histogram(let points):
            o.raw(",\"histogram\":{\"dataPoints\":[")
            for (i, p) in points.enumerated() {
                if i > 0 { o.raw(",") }
                o.raw("{\"startTimeUnixNano\":")
                o.uint(start)
                o.raw(",\"timeUnixNano\":")
                o.uint(time)
                o.raw(",\"count\":")
                o.uint(p.count)
                o.raw(",\"sum\":")
                o.double(p.sum)
                o.raw(",\"bucketCounts\":[")
                for (j, c) in p.bucketCounts.enumerated() {
                    if j > 0 { o.raw(",") }
                    o.uint(c)
                }
                o.raw("],\"explicitBounds\":[")
                for (j, b) in p.bounds.enumerated() {
                    if j > 0 { o.raw(",") }
                    o.double(b)
                }
                o.raw("],")
                attributes(p.attributes, into: &o)
                o.raw("}")
            }
            o.raw("],\"aggregationTemporality\":2}}")
        }
    }
}
