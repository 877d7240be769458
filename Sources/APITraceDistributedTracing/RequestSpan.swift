import APITraceCapture
import APITraceFormat
import Instrumentation
import Tracing

/// A span started by ``RequestSpanTracer``: keeps what the instrumented library sets and, when it
/// ends, records a `request` event if it is an HTTP client span. Every call is also passed to the
/// forwarded tracer's span, when there is one.
public final class RequestSpan: Tracing.Span, Sendable {
    private struct State: @unchecked Sendable {
        // @unchecked: span attributes and recorded errors are not Sendable; they stay behind the lock.
        var name: String
        // Room for an HTTP client span's attributes up front: growing 1 -> 2 -> 4 -> 8 was three
        // reallocations per span (AsyncHTTPClient sets about eight).
        var attributes = SpanAttributes(Dictionary(minimumCapacity: 8))
        var errors: [any Error] = []
        var status: SpanStatus?
        var ended = false
    }

    private let state: Locked<State>

    /// The span's kind.
    public let kind: SpanKind
    public let context: ServiceContext
    /// The span's W3C context; its trace id is written as `trace_id`.
    public let traceParent: TraceParent
    let startedAt: ContinuousClock.Instant
    let forwarded: (any Tracing.Span)?
    let tracer: RequestSpanTracer

    init(
        operationName: String, kind: SpanKind, context: ServiceContext, traceParent: TraceParent,
        startedAt: ContinuousClock.Instant, forwarded: (any Tracing.Span)?, tracer: RequestSpanTracer
    ) {
        self.state = Locked(State(name: operationName))
        self.kind = kind
        self.context = context
        self.traceParent = traceParent
        self.startedAt = startedAt
        self.forwarded = forwarded
        self.tracer = tracer
    }

    public var operationName: String {
        get { state.withLock { $0.name } }
        set {
            state.withLock { $0.name = newValue }
            forwarded?.operationName = newValue
        }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set {
            state.withLock { $0.attributes = newValue }
            forwarded?.attributes = newValue
        }
        // `span.attributes[key] = value` (how instrumented libraries write) would otherwise copy every
        // attribute per write: the value is taken out while the caller changes it.
        _modify {
            var attributes = state.withLock { state in
                defer { state.attributes = [:] }
                return state.attributes
            }
            defer {
                state.withLock { $0.attributes = attributes }
                forwarded?.attributes = attributes
            }
            yield &attributes
        }
    }

    public var isRecording: Bool { state.withLock { !$0.ended } }

    public func setStatus(_ status: SpanStatus) {
        state.withLock { $0.status = status }
        forwarded?.setStatus(status)
    }

    public func addEvent(_ event: SpanEvent) {
        forwarded?.addEvent(event)
    }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        state.withLock { $0.errors.append(error) }
        forwarded?.recordError(error, attributes: attributes, at: instant())
    }

    public func addLink(_ link: SpanLink) {
        forwarded?.addLink(link)
    }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = ContinuousClock.now
        let snapshot: (SpanAttributes, [any Error], String)? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return (state.attributes, state.errors, state.name)
        }
        forwarded?.end(at: instant())
        guard let (attributes, errors, name) = snapshot, kind == .client else { return }
        recordRequest(attributes: attributes, errors: errors, operationName: name, end: end)
    }
}
