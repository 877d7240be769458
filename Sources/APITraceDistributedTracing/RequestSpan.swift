public import APITraceCapture
import APITraceFormat
public import Instrumentation
public import Tracing

/// A span started by ``RequestSpanTracer``: keeps what the instrumented library sets and, when it
/// ends, records a `request` event if it is an HTTP client span. Every call is also passed to the
/// forwarded tracer's span, when there is one.
///
/// Ending a client span only stamps the end and queues the span: its event is built on the
/// recorder's drain thread (see ``end(at:)``). Writes after the end (attributes, name, errors)
/// still reach the forwarded span but not the event, as OpenTelemetry spans stop recording when ended.
///
/// Its trace and span ids stay integers until a `traceparent` header or the event needs them as
/// text, and its `ServiceContext` is built only when read.
public final class RequestSpan: Tracing.Span, Sendable {
    private struct State: @unchecked Sendable {
        // @unchecked: span attributes and a recorded error are not Sendable; they stay behind the lock.
        var name: String
        var attributes: SpanAttributes
        var error: (any Error)?
        var ended = false
    }

    // A span is usually touched by one task, but AsyncHTTPClient ends it on an event loop and
    // nothing stops a caller from setting attributes from several: one lock, in the same allocation
    // as the state, held for nanoseconds (twice per attribute write: to take the attributes out
    // and to put them back, never while the caller's code runs).
    private let state: Locked<State>

    /// An empty attribute dictionary with room for eight: a client span starts with this one and
    /// its first write copies it, inside swift-distributed-tracing's specialized code. Creating
    /// the room per span (`Dictionary(minimumCapacity:)`, `reserveCapacity`) runs unspecialized in
    /// the standard library and looks the storage type up at run time, about 1,200 instructions.
    private static let clientAttributes = SpanAttributes(Dictionary(minimumCapacity: 8))

    /// The span's kind.
    public let kind: SpanKind
    /// The context the span's own entry is added to: the parent's, or the forwarded span's.
    private let baseContext: ServiceContext
    /// The span's W3C ids, as integers until a header or an event needs them as text.
    let ids: SpanIDs
    let startedAt: ContinuousClock.Instant
    let forwarded: (any Tracing.Span)?
    let tracer: RequestSpanTracer

    init(
        operationName: String, kind: SpanKind, baseContext: ServiceContext, ids: SpanIDs,
        startedAt: ContinuousClock.Instant, forwarded: (any Tracing.Span)?, tracer: RequestSpanTracer
    ) {
        // A client span gets room for an HTTP request's attributes up front: growing 1 -> 2 -> 4 -> 8
        // was three reallocations per span (AsyncHTTPClient sets about eight). A write is then one
        // insert, cheaper than the dictionary `NoOpTracer`'s spans allocate per write; the fields a
        // request needs are picked out once, when the span ends (`HTTPSpanFields`). Other spans
        // record nothing and start empty.
        let attributes = kind == .client ? Self.clientAttributes : SpanAttributes()
        self.state = Locked(State(name: operationName, attributes: attributes))
        self.kind = kind
        self.baseContext = baseContext
        self.ids = ids
        self.startedAt = startedAt
        self.forwarded = forwarded
        self.tracer = tracer
    }

    /// The span's context: its parent's (or the forwarded span's) with this span's W3C ids, which
    /// child spans and `inject` read. Built when read: AsyncHTTPClient never reads it.
    public var context: ServiceContext {
        var context = baseContext
        context[RequestSpanKey.self] = self
        return context
    }

    /// The span's W3C context; its trace id is written as `trace_id`.
    public var traceParent: TraceParent { ids.traceParent }

    public var operationName: String {
        get { state.withLock { $0.name } }
        set {
            state.withLock { if !$0.ended { $0.name = newValue } }
            forwarded?.operationName = newValue
        }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set {
            state.withLock { if !$0.ended { $0.attributes = newValue } }
            forwarded?.attributes = newValue
        }
        // `span.attributes[key] = value` (how instrumented libraries write) would otherwise copy every
        // attribute per write: the value is taken out while the caller changes it (and put back even
        // when the span ended meanwhile: an end racing a write keeps what was there).
        _modify {
            var (attributes, taken) = state.withLock { state in
                guard !state.ended else { return (state.attributes, false) }
                defer { state.attributes = [:] }
                return (state.attributes, true)
            }
            defer {
                if taken { state.withLock { $0.attributes = attributes } }
                forwarded?.attributes = attributes
            }
            yield &attributes
        }
    }

    public var isRecording: Bool { state.withLock { !$0.ended } }

    public func setStatus(_ status: SpanStatus) {
        forwarded?.setStatus(status)
    }

    public func addEvent(_ event: SpanEvent) {
        forwarded?.addEvent(event)
    }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        state.withLock { state in
            if state.error == nil && !state.ended { state.error = error }
        }
        forwarded?.recordError(error, attributes: attributes, at: instant())
    }

    public func addLink(_ link: SpanLink) {
        forwarded?.addLink(link)
    }

    /// Ends the span; the first call records the request, later ones do nothing here. Any thread may end it.
    ///
    /// On the caller's thread this only reads the monotonic clock and queues the span (one short
    /// lock); the `request` event is built on the recorder's drain thread, with this end and the
    /// span's start as its `ts` and `duration_ms`, and reaches the sinks within one drain, before
    /// ``APITraceCapture/APITracer/flush()`` returns at the latest.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = ContinuousClock.now
        let first = state.withLock { state in
            guard !state.ended else { return false }
            state.ended = true
            return true
        }
        forwarded?.end(at: instant())
        guard first, kind == .client else { return }
        tracer.recorder.recordLater(self, endedAt: end)
    }
}

extension RequestSpan: DeferredEvent {
    /// Builds and records the request of the ended span, on the recorder's drain thread.
    package func recordDeferred(endedAt end: ContinuousClock.Instant, into recorder: APITracer) {
        // Ended: nothing writes to the state any more.
        let (attributes, error, name) = state.withLock { ($0.attributes, $0.error, $0.name) }
        recordRequest(HTTPSpanFields(attributes), error: error, operationName: name, end: end)
    }
}
