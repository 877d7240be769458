public import APITraceCapture
public import Instrumentation
public import Tracing

/// A swift-distributed-tracing `Tracer` that turns HTTP client spans into apitrace `request` events,
/// so everything instrumented with swift-distributed-tracing (AsyncHTTPClient among them) is
/// captured without touching a call site.
///
/// ```swift
/// var configuration = HTTPClient.Configuration()
/// configuration.tracing.tracer = RequestSpanTracer(recorder: .shared)
/// let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
/// ```
///
/// A span becomes a request when its kind is `.client` and it has a method (`http.request.method`,
/// or the older `http.method`). Fields come from OpenTelemetry attributes: `http.route` or
/// `url.template` for the route (otherwise `url.path` with ids replaced), `server.address` for the
/// host, `http.response.status_code` (or AsyncHTTPClient's `http.status_code`) for the status,
/// `http.response.body.size` and `http.request.body.size` for the bytes, a recorded error (or
/// `error.type`) for the error. The duration is the span's, on the monotonic clock. `trace_id` is
/// the span's trace id: the parent's from the `ServiceContext` when there is one, so the request
/// joins the caller's trace. Never `url.full` or `url.query`.
///
/// The caller's thread only stamps a span's end and queues it: the event is built (attributes,
/// route, ids as text) and goes through the recorder's steps (sampling, redaction, the
/// ``APITraceCapture/APITracer/Configuration/eventHook``) on the recorder's drain thread, one span
/// after another in the order they ended. It reaches the sinks within one drain, a few
/// milliseconds later, and before ``APITraceCapture/APITracer/flush()`` (or ``forceFlush()``) returns at the
/// latest: flush before reading a sink. Its `ts` and `duration_ms` are the span's own end and start.
/// At most 10,000 ended spans wait; past that a span is counted in a `dropped` event (reason
/// `span_queue_full`) instead of blocking the caller.
///
/// With `forwardingTo`, every span (HTTP or not) also goes to that tracer (swift-otel, for example),
/// and the trace and span ids are that tracer's: a request event's `trace_id` and `span_id` are those
/// of the forwarded client span, so the OpenTelemetry backend shows apitrace's events and the
/// service's own spans in one trace (Docs/otlp.md).
///
/// > Note: apitrace's recorder is named `APITracer` so that it never clashes with
/// > swift-distributed-tracing's `Tracer` in a file importing both.
public final class RequestSpanTracer: Tracing.Tracer {
    public typealias Span = RequestSpan

    /// Where `request` events go.
    public let recorder: APITracer
    /// The tracer every span is forwarded to, if any.
    public let forwardingTo: (any Tracing.Tracer)?
    /// Makes routes from `url.path` when a span has no `http.route`.
    public let normalizer: RouteNormalizer

    /// Creates a tracer recording into `recorder`, forwarding to `forwardingTo` when given.
    public init(recorder: APITracer = .shared, forwardingTo: (any Tracing.Tracer)? = nil, normalizer: RouteNormalizer = RouteNormalizer()) {
        self.recorder = recorder
        self.forwardingTo = forwardingTo
        self.normalizer = normalizer
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> RequestSpan {
        let parentContext = context()
        let startedAt = ContinuousClock.now
        guard let forwardingTo else {
            // Ids stay integers: text only when a header or the event needs it.
            let ids = parentContext.ownSpanIDs?.child() ?? SpanIDs.random()
            return RequestSpan(
                operationName: operationName, kind: kind, baseContext: parentContext, ids: ids,
                startedAt: startedAt, forwarded: nil, tracer: self
            )
        }
        let forwarded = forwardingTo.startSpan(
            operationName, context: parentContext, ofKind: kind, at: instant(), function: function, file: fileID, line: line
        )
        let ids: SpanIDs
        // The forwarded tracer's own ids for its new span: its context also carries our parent span,
        // whose ids are not this span's (a request event would name the parent's span).
        if let theirs = forwarded.context.instrumentSpanIDs(forwardingTo) {
            ids = theirs
        } else if let parent = parentContext.spanIDs(through: forwardingTo) {
            ids = parent.child()
        } else {
            ids = SpanIDs.random()
        }
        return RequestSpan(
            operationName: operationName, kind: kind, baseContext: forwarded.context, ids: ids,
            startedAt: startedAt, forwarded: forwarded, tracer: self
        )
    }

    /// Records the events of every span ended so far into the recorder's sinks, waiting until it is
    /// done, then asks the forwarded tracer, if any, to flush too. The recorder's sinks themselves
    /// are flushed by ``APITraceCapture/APITracer/flush()``, which drains the spans first.
    public func forceFlush() {
        recorder.drainDeferred()
        if let forwardingTo { forwardedFlush(forwardingTo).flush() }
    }

    public func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        if let forwardingTo {
            forwardingTo.extract(carrier, into: &context, using: extractor)
            return
        }
        if let value = extractor.extract(key: "traceparent", from: carrier),
           let parent = TraceParent(headerValue: value), let ids = SpanIDs(parent) {
            context[TraceParentKey.self] = ids
            context[RequestSpanKey.self] = nil
        }
    }

    public func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        if let forwardingTo {
            forwardingTo.inject(context, into: &carrier, using: injector)
            return
        }
        if let ids = context.ownSpanIDs {
            injector.inject(ids.traceParent.headerValue, forKey: "traceparent", into: &carrier)
        }
    }
}

/// Calls the forwarded tracer's `forceFlush()`, which swift-distributed-tracing deprecates (on
/// `LegacyTracer`, with no replacement) though tracers still act on it (its own InMemoryTracer counts it). The
/// call sits in a deprecated witness of a requirement that is not, so forwarding the flush builds
/// without a deprecation warning.
private protocol FlushForwarding {
    func flush()
}

private struct ForwardedFlush<Forwarded: Tracing.Tracer>: FlushForwarding {
    let tracer: Forwarded

    @available(*, deprecated, message: "forwards LegacyTracer.forceFlush()")
    func flush() { tracer.forceFlush() }
}

private func forwardedFlush<Forwarded: Tracing.Tracer>(_ tracer: Forwarded) -> any FlushForwarding {
    ForwardedFlush(tracer: tracer)
}
