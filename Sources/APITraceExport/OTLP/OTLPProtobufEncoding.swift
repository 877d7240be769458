/// The OTLP protobuf encoding of batches and metrics (`opentelemetry/proto/collector/*/v1`), field
/// numbers as in opentelemetry-proto; the tests decode it with the official generated classes.
public enum OTLPProtobufEncoding {
    /// An `ExportTraceServiceRequest` of the batch's spans.
    public static func traces(_ batch: OTLPBatch) -> [UInt8] {
        var w = ProtobufWriter(reservingCapacity: batch.spanCount * 320)
        for group in batch.spans {
            w.message(1) { w in  // resource_spans
                resource(group.resource, into: &w)
                w.message(2) { w in  // scope_spans
                    scope(into: &w)
                    for span in group.spans { w.message(2) { w in encode(span, into: &w) } }
                }
            }
        }
        return w.finished()
    }

    /// An `ExportLogsServiceRequest` of the batch's log records.
    public static func logs(_ batch: OTLPBatch) -> [UInt8] {
        var w = ProtobufWriter(reservingCapacity: batch.logCount * 256)
        for group in batch.logs {
            w.message(1) { w in  // resource_logs
                resource(group.resource, into: &w)
                w.message(2) { w in  // scope_logs
                    scope(into: &w)
                    for record in group.records { w.message(2) { w in encode(record, into: &w) } }
                }
            }
        }
        return w.finished()
    }

    /// An `ExportMetricsServiceRequest`: each resource's metrics, points from `start` to `time` (ns since 1970).
    public static func metrics(_ groups: [(resource: OTLPResource, metrics: [OTLPMetric])], start: UInt64, time: UInt64) -> [UInt8] {
        var w = ProtobufWriter()
        for group in groups {
            w.message(1) { w in  // resource_metrics
                resource(group.resource, into: &w)
                w.message(2) { w in  // scope_metrics
                    scope(into: &w)
                    for metric in group.metrics { w.message(2) { w in encode(metric, start: start, time: time, into: &w) } }
                }
            }
        }
        return w.finished()
    }

    static func resource(_ resource: OTLPResource, into w: inout ProtobufWriter) {
        w.message(1) { w in attributes(resource.attributes, field: 1, into: &w) }
    }

    static func scope(into w: inout ProtobufWriter) {
        w.message(1) { w in w.string(1, OTLPScope.name) }
    }

    private static func attributes(_ attributes: [OTLPAttribute], field: Int, into w: inout ProtobufWriter) {
        for a in attributes {
            w.message(field) { w in
                w.string(1, a.key)
                w.message(2) { w in
                    switch a.value {
                    case .string(let s): w.stringAlways(1, s)
                    case .bool(let b):
                        // A oneof member is written even when false.
                        w.varint(2 << 3)
                        w.varint(b ? 1 : 0)
                    case .int(let i):
                        w.varint(3 << 3)
                        w.varint(UInt64(bitPattern: i))
                    case .double(let d): w.doubleAlways(4, d)
                    }
                }
            }
        }
    }

    private static func encode(_ span: OTLPSpan, into w: inout ProtobufWriter) {
        w.bytesField(1, span.traceID)
        w.bytesField(2, span.spanID)
        w.string(5, span.name)
        w.int(6, Int64(span.kind.rawValue))
        w.fixed64(7, span.startTimeUnixNano)
        w.fixed64(8, span.endTimeUnixNano)
        attributes(span.attributes, field: 9, into: &w)
        for event in span.events {
            w.message(11) { w in
                w.fixed64(1, event.timeUnixNano)
                w.string(2, event.name)
                attributes(event.attributes, field: 3, into: &w)
            }
        }
        w.message(15, always: false) { w in
            w.string(2, span.statusMessage)
            w.int(3, Int64(span.status.rawValue))
        }
    }

    private static func encode(_ record: OTLPLogRecord, into w: inout ProtobufWriter) {
        w.fixed64(1, record.timeUnixNano)
        w.int(2, Int64(record.severityNumber))
        w.string(3, record.severityText)
        w.message(5) { w in w.stringAlways(1, record.body) }
        attributes(record.attributes, field: 6, into: &w)
        w.bytesField(9, record.traceID)
        w.bytesField(10, record.spanID)
        w.string(12, record.eventName)
    }

    private static func encode(_ metric: OTLPMetric, start: UInt64, time: UInt64, into w: inout ProtobufWriter) {
        w.string(1, metric.name)
        w.string(2, metric.description)
        w.string(3, metric.unit)
        switch metric.data {
        case .sum(let points, let monotonic):
            w.message(7) { w in
                for p in points {
                    w.message(1) { w in
                        w.fixed64(2, start)
                        w.fixed64(3, time)
                        w.doubleAlways(4, p.value)
                        attributes(p.attributes, field: 7, into: &w)
                    }
                }
                w.int(2, 2)  // AGGREGATION_TEMPORALITY_CUMULATIVE
                w.bool(3, monotonic)
            }
        case .histogram(let points):
            w.message(9) { w in
                for p in points {
                    w.message(1) { w in
                        w.fixed64(2, start)
                        w.fixed64(3, time)
                        w.fixed64(4, p.count)
                        w.doubleAlways(5, p.sum)
                        w.packedFixed64(6, p.bucketCounts)
                        w.packedDouble(7, p.bounds)
                        attributes(p.attributes, field: 9, into: &w)
                    }
                }
                w.int(2, 2)
            }
        }
    }
}
