/// One line of a trace file: when it happened, which session and trace it belongs to, and what happened.
///
/// Events are value types with `var` fields so that hooks (redaction, sampling) can rewrite them
/// before they reach a sink.
///
/// ```swift
/// let event = TraceEvent(.request(.init(method: "GET", route: "/apps/{id}", status: 200, durationMs: 42)))
/// ```
public struct TraceEvent: Sendable, Equatable {
    /// When the event happened (`ts`).
    public var timestamp: TraceTimestamp
    /// The client session the event belongs to (`session`), if the producer tracks sessions.
    public var session: String?
    /// The W3C trace id of the request the event belongs to (`trace_id`), if any.
    public var traceID: String?
    /// The W3C span id (16 hex digits) of the client span the event belongs to (`span_id`): for a
    /// `request`, the parent id its `traceparent` carried, so the server's span is its child.
    public var spanID: String?
    /// What happened.
    public var payload: Payload

    /// What an event records; each case is one value of the `type` field.
    public enum Payload: Sendable, Equatable {
        /// `"type":"request"`: one HTTP request performed by a backend.
        case request(Request)
        /// `"type":"decode_failure"`: a response that did not decode into its model.
        case decodeFailure(DecodeFailure)
        /// `"type":"error"`: an error recorded with `recordError`.
        case error(RecordedError)
        /// `"type":"sse"`: a Server-Sent Events connection opening, closing, reconnecting or failing.
        case sse(SSE)
        /// `"type":"websocket"`: a WebSocket connection opening, closing, reconnecting or failing.
        case websocket(WebSocket)
        /// `"type":"log"`: a log line.
        case log(Log)
        /// `"type":"dropped"`: the producer had to drop events; written so that loss is visible in the data.
        case dropped(Dropped)
    }

    /// Creates an event.
    public init(
        timestamp: TraceTimestamp = .now(), session: String? = nil, traceID: String? = nil, spanID: String? = nil,
        _ payload: Payload
    ) {
        self.timestamp = timestamp
        self.session = session
        self.traceID = traceID
        self.spanID = spanID
        self.payload = payload
    }

    /// The value of the `type` field for this event.
    public var type: String { payload.type }
}

extension TraceEvent.Payload {
    /// The value of the `type` field.
    public var type: String {
        switch self {
        case .request: "request"
        case .decodeFailure: "decode_failure"
        case .error: "error"
        case .sse: "sse"
        case .websocket: "websocket"
        case .log: "log"
        case .dropped: "dropped"
        }
    }
}
