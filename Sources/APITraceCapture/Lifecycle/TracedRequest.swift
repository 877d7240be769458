public import APITraceFormat

/// One request in flight: the single lifecycle every adapter uses (``TracingBackend``, the OpenAPI
/// middleware, the URLSession wrapper, the distributed-tracing tracer, the SSE client).
///
/// Start it with ``APITracer/startRequest(method:url:route:normalizer:attempt:bytesOut:traceParent:injectsTraceParent:)``
/// just before sending, send ``traceParentHeader`` when it is set, then end it exactly once with
/// ``finish(status:bytesIn:timing:at:)`` when the response arrived (whatever its status) or
/// ``fail(_:status:bytesIn:timing:at:)`` when it did not:
///
/// ```swift
/// let request = tracer.startRequest(method: "GET", url: url, route: "/apps/{id}")
/// do {
///     let (data, response) = try await send(url)
///     request.finish(status: response.statusCode, bytesIn: Int64(data.count))
/// } catch {
///     request.fail(error)
///     throw error
/// }
/// ```
///
/// The `request` event goes through the tracer's steps (sampling, redaction, session, then
/// ``APITracer/Configuration/eventHook``, where you add or rewrite fields), and one log line follows:
/// `debug` on a response, `warning` when no response arrived, both with the duration.
public struct TracedRequest: Sendable {
    /// Where the event goes.
    public let tracer: APITracer
    /// HTTP method, upper case.
    public var method: String
    /// Route template, such as `/apps/{id}`.
    public var route: String
    /// Server host, as written in the URL.
    public var host: String?
    /// 1 for the first try, 2 for the first retry, and so on.
    public var attempt: Int
    /// Request body bytes, when known.
    public var bytesOut: Int64?
    /// W3C trace id written as `trace_id`, when the request is part of a trace.
    public var traceID: String?
    /// W3C span id written as `span_id`: the parent id of the `traceparent` the request carried, so
    /// the server's span is this request's child.
    public var spanID: String?
    /// Server port written as `port`, when the URL named one or its scheme implies one.
    public var port: Int?
    /// The `traceparent` header value to send with the request; `nil` when there is nothing to add
    /// (propagation off, or the request already carries one).
    public let traceParentHeader: String?
    /// When the request started, on the monotonic clock.
    public let startedAt: ContinuousClock.Instant

    /// Creates a request in flight; adapters call ``APITracer/startRequest(method:route:host:attempt:bytesOut:traceID:startedAt:)`` instead.
    init(
        tracer: APITracer, method: String, route: String, host: String?, attempt: Int, bytesOut: Int64?,
        traceID: String?, traceParentHeader: String?, startedAt: ContinuousClock.Instant,
        spanID: String? = nil, port: Int? = nil
    ) {
        self.spanID = spanID
        self.port = port
        self.tracer = tracer
        self.method = method
        // Redacted here, so the log line and the event agree (`;jsessionid=`, queries).
        self.route = tracer.redaction.redact(route: route)
        self.host = host
        self.attempt = attempt
        self.bytesOut = bytesOut
        self.traceID = traceID
        self.traceParentHeader = traceParentHeader
        self.startedAt = startedAt
    }

    /// Ends the request with the response's status (any status, 500 included) and body size, and
    /// the connection phases when the platform measured them.
    public func finish(
        status: Int, bytesIn: Int64?, timing: TraceEvent.Request.Timing? = nil, at end: ContinuousClock.Instant = .now
    ) {
        finish(status: status, bytesIn: bytesIn, timing: timing, at: end, timestamp: .now())
    }

    /// ``finish(status:bytesIn:timing:at:)`` for an event built after the request ended: `timestamp`
    /// is the wall-clock time of `end`, not of the call.
    package func finish(
        status: Int, bytesIn: Int64?, timing: TraceEvent.Request.Timing? = nil, at end: ContinuousClock.Instant,
        timestamp: TraceTimestamp
    ) {
        let durationMs = startedAt.duration(to: end).inMilliseconds
        tracer.record(TraceEvent(timestamp: timestamp, traceID: traceID, spanID: spanID, .request(TraceEvent.Request(
            method: method, route: route, host: host, status: status, durationMs: durationMs,
            bytesIn: bytesIn, bytesOut: bytesOut, error: nil, attempt: attempt, timing: timing, port: port
        ))))
        if tracer.logging.isEnabled(.debug) {
            // `route` may have been set since the start: the log line gets the event's redaction.
            tracer.log(.debug, "\(method) \(tracer.redaction.redact(route: route)) -> \(status) (\(durationMs.traceFormattedMilliseconds) ms)")
        }
    }

    /// Ends the request with an error: no response arrived (`status` `nil`), or the client gave up
    /// on one it had (a body that failed to stream after the head, with its `status`).
    ///
    /// The error is written by its stable ``ErrorIdentity``, such as `URLError.timedOut` or `CancellationError`.
    public func fail(
        _ error: any Error, status: Int? = nil, bytesIn: Int64? = nil, timing: TraceEvent.Request.Timing? = nil,
        at end: ContinuousClock.Instant = .now
    ) {
        fail(
            identity: ErrorIdentity.of(error), description: String(describing: error), status: status, bytesIn: bytesIn,
            timing: timing, at: end)
    }

    /// Ends the request with an error already named by its identity; `description` goes to the log line only.
    public func fail(
        identity: String, description: String? = nil, status: Int? = nil, bytesIn: Int64? = nil,
        timing: TraceEvent.Request.Timing? = nil, at end: ContinuousClock.Instant = .now
    ) {
        fail(identity: identity, description: description, status: status, bytesIn: bytesIn, timing: timing, at: end, timestamp: .now())
    }

    /// ``fail(identity:description:status:bytesIn:timing:at:)`` for an event built after the request
    /// ended: `timestamp` is the wall-clock time of `end`, not of the call.
    package func fail(
        identity: String, description: String? = nil, status: Int? = nil, bytesIn: Int64? = nil,
        timing: TraceEvent.Request.Timing? = nil, at end: ContinuousClock.Instant, timestamp: TraceTimestamp
    ) {
        let durationMs = startedAt.duration(to: end).inMilliseconds
        tracer.tracedFailures.note(identity: identity, description: description)
        tracer.record(TraceEvent(timestamp: timestamp, traceID: traceID, spanID: spanID, .request(TraceEvent.Request(
            method: method, route: route, host: host, status: status, durationMs: durationMs,
            bytesIn: bytesIn, bytesOut: bytesOut, error: identity, attempt: attempt, timing: timing, port: port
        ))))
        if tracer.logging.isEnabled(.warning) {
            let detail = description.map { ": \($0)" } ?? ""
            tracer.log(.warning, "\(method) \(tracer.redaction.redact(route: route)) failed after \(durationMs.traceFormattedMilliseconds) ms: \(identity)\(detail)")
        }
    }
}
