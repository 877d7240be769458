public import APITraceFormat

/// An event's payload as its type, `nil` when the event is of another type: for assertions on an
/// event's envelope and payload together.
///
/// ```swift
/// let event = try #require(traces.events.first { $0.request?.route == "/apps/{id}" })
/// #expect(event.traceID != nil)
/// ```
extension TraceEvent {
    /// The payload of a `request` event.
    public var request: Request? { if case .request(let request) = payload { request } else { nil } }
    /// The payload of a `decode_failure` event.
    public var decodeFailure: DecodeFailure? { if case .decodeFailure(let failure) = payload { failure } else { nil } }
    /// The payload of an `error` event.
    public var recordedError: RecordedError? { if case .error(let error) = payload { error } else { nil } }
    /// The payload of an `sse` event.
    public var sse: SSE? { if case .sse(let sse) = payload { sse } else { nil } }
    /// The payload of a `websocket` event.
    public var webSocket: WebSocket? { if case .websocket(let webSocket) = payload { webSocket } else { nil } }
    /// The payload of a `log` event.
    public var log: Log? { if case .log(let log) = payload { log } else { nil } }
    /// The payload of a `dropped` event.
    public var dropped: Dropped? { if case .dropped(let dropped) = payload { dropped } else { nil } }
}

/// The events of each type, from any sequence of events: what a ``TestTracer`` recorded, a sink's
/// `events`, or the events read back from a trace file.
///
/// ```swift
/// var events: [TraceEvent] = []
/// _ = TraceFileReader(path: file).forEachEvent { events.append($0) }
/// #expect(events.requests.map(\.status) == [200, 503])
/// ```
extension Sequence where Element == TraceEvent {
    /// The `request` events.
    public var requests: [TraceEvent.Request] { compactMap(\.request) }
    /// The `decode_failure` events.
    public var decodeFailures: [TraceEvent.DecodeFailure] { compactMap(\.decodeFailure) }
    /// The `error` events.
    public var errors: [TraceEvent.RecordedError] { compactMap(\.recordedError) }
    /// The `sse` events.
    public var sse: [TraceEvent.SSE] { compactMap(\.sse) }
    /// The `websocket` events.
    public var webSockets: [TraceEvent.WebSocket] { compactMap(\.webSocket) }
    /// The `log` events.
    public var logs: [TraceEvent.Log] { compactMap(\.log) }
    /// The `dropped` events: what a tracer's rate limits or a sink's bound held back.
    public var dropped: [TraceEvent.Dropped] { compactMap(\.dropped) }
}
