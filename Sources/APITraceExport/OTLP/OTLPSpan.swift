/// One span as OTLP carries it (`opentelemetry.proto.trace.v1.Span`), the fields an export sets.
public struct OTLPSpan: Sendable, Equatable {
    /// `SpanKind`: apitrace's requests are `client` (3).
    public enum Kind: Int, Sendable {
        case unspecified = 0, `internal` = 1, server = 2, client = 3, producer = 4, consumer = 5
    }

    /// `Status.StatusCode`.
    public enum StatusCode: Int, Sendable {
        case unset = 0, ok = 1, error = 2
    }

    /// A point in time within the span (`Span.Event`), such as a connection phase ending.
    public struct Event: Sendable, Equatable {
        public var timeUnixNano: UInt64
        public var name: String
        public var attributes: [OTLPAttribute]
    }

    /// 16 bytes.
    public var traceID: [UInt8]
    /// 8 bytes.
    public var spanID: [UInt8]
    public var name: String
    public var kind: Kind
    public var startTimeUnixNano: UInt64
    public var endTimeUnixNano: UInt64
    public var attributes: [OTLPAttribute]
    public var events: [Event]
    public var status: StatusCode
    public var statusMessage: String
}
