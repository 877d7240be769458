import APITraceCapture
import Foundation
import Instrumentation
import Tracing

/// A span started by ``RequestSpanTracer``: keeps what the instrumented library sets and, when it
/// ends, records a `request` event if it is an HTTP client span. Every call is also passed to the
/// forwarded tracer's span, when there is one.
public final class RequestSpan: Tracing.Span, @unchecked Sendable {
    // @unchecked: every mutable field is behind `lock`.
    private let lock = NSLock()
    private var name: String
    private var storedAttributes: SpanAttributes = [:]
    private var errors: [any Error] = []
    private var status: SpanStatus?
    private var ended = false

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
        self.name = operationName
        self.kind = kind
        self.context = context
        self.traceParent = traceParent
        self.startedAt = startedAt
        self.forwarded = forwarded
        self.tracer = tracer
    }

    public var operationName: String {
        get { lock.withLock { name } }
        set {
            lock.withLock { name = newValue }
            forwarded?.operationName = newValue
        }
    }

    public var attributes: SpanAttributes {
        get { lock.withLock { storedAttributes } }
        set {
            lock.withLock { storedAttributes = newValue }
            forwarded?.attributes = newValue
        }
    }

    public var isRecording: Bool { lock.withLock { !ended } }

    public func setStatus(_ status: SpanStatus) {
        lock.withLock { self.status = status }
        forwarded?.setStatus(status)
    }

    public func addEvent(_ event: SpanEvent) {
        forwarded?.addEvent(event)
    }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        lock.withLock { errors.append(error) }
        forwarded?.recordError(error, attributes: attributes, at: instant())
    }

    public func addLink(_ link: SpanLink) {
        forwarded?.addLink(link)
    }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = ContinuousClock.now
        let snapshot: (SpanAttributes, [any Error], String)? = lock.withLock {
            guard !ended else { return nil }
            ended = true
            return (storedAttributes, errors, name)
        }
        forwarded?.end(at: instant())
        guard let (attributes, errors, name) = snapshot, kind == .client else { return }
        recordRequest(attributes: attributes, errors: errors, operationName: name, end: end)
    }
}
