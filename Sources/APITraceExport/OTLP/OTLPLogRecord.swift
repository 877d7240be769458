/// One log record as OTLP carries it (`opentelemetry.proto.logs.v1.LogRecord`), the fields an export sets.
public struct OTLPLogRecord: Sendable, Equatable {
    public var timeUnixNano: UInt64
    /// `SeverityNumber`: 1 trace, 5 debug, 9 info, 10 notice (info2), 13 warn, 17 error, 21 fatal.
    public var severityNumber: Int
    public var severityText: String
    /// The human-readable message (`body`, a string value).
    public var body: String
    /// What kind of event it is (`event_name`), such as `apitrace.decode_failure`.
    public var eventName: String
    public var attributes: [OTLPAttribute]
    /// 16 bytes, or empty when the event belongs to no trace.
    public var traceID: [UInt8]
    /// 8 bytes, or empty.
    public var spanID: [UInt8]
}
