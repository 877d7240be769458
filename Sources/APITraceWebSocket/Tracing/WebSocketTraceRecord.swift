package import APITraceCapture
package import APITraceFormat

/// A `websocket` event waiting to be recorded: the connection's task only queues it (one lock, no
/// JSON, no redaction); the tracer's drain thread runs the steps and hands it to the sinks.
final class WebSocketTraceRecord: DeferredEvent {
    let record: TraceEvent.WebSocket

    init(_ record: TraceEvent.WebSocket) {
        self.record = record
    }

    func recordDeferred(endedAt end: ContinuousClock.Instant, into tracer: APITracer) {
        tracer.record(TraceEvent(timestamp: .wallClock(of: end), .websocket(record)))
    }
}

extension APITracer {
    /// Records a `websocket` event off the calling thread, with the time of the call as its `ts`.
    package func recordWebSocket(_ record: TraceEvent.WebSocket) {
        recordLater(WebSocketTraceRecord(record), endedAt: .now)
    }
}
