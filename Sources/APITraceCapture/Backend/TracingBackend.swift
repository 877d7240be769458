import APITraceFormat
import Foundation

/// Wraps any ``HTTPBackend`` and records one `request` event per request.
///
/// The event holds the method, the route template (the request's ``BackendRequest/route``, or the
/// path with ids replaced by ``RouteNormalizer``), the host, the status, the duration on the
/// monotonic clock, bytes in and out, the error identity when no response arrived (such as
/// `URLError.timedOut`) and the attempt. Never the URL, the query, headers or bodies.
///
/// ```swift
/// let backend = TracingBackend(URLSessionBackend(), tracer: .shared, injectsTraceParent: true)
/// let response = try await backend.perform(BackendRequest(url: url, route: "/apps/{id}"))
/// ```
///
/// Errors and responses pass through unchanged.
public struct TracingBackend<Base: HTTPBackend>: HTTPBackend {
    /// The backend that performs the requests.
    public let base: Base
    /// Where events go.
    public let tracer: Tracer
    /// Adds a W3C `traceparent` header (unless the request has one) and writes its trace id as `trace_id`.
    public var injectsTraceParent: Bool
    /// Makes routes for requests without a template.
    public var normalizer: RouteNormalizer

    /// Wraps `base`.
    public init(_ base: Base, tracer: Tracer = .shared, injectsTraceParent: Bool = false, normalizer: RouteNormalizer = RouteNormalizer()) {
        self.base = base
        self.tracer = tracer
        self.injectsTraceParent = injectsTraceParent
        self.normalizer = normalizer
    }

    public func perform(_ request: BackendRequest) async throws -> BackendResponse {
        var request = request
        var traceID: String?
        if injectsTraceParent {
            if let existing = request.headers.first(where: { $0.key.lowercased() == "traceparent" }),
               let parent = TraceParent(headerValue: existing.value) {
                traceID = parent.traceID
            } else {
                let parent = TraceParent.random()
                request.headers["traceparent"] = parent.headerValue
                traceID = parent.traceID
            }
        }
        let route = request.route ?? request.url.traceRoute(normalizer)
        let logging = tracer.logging
        if logging.isEnabled(.trace) {
            let headers = tracer.redaction.redact(headers: request.headers)
            tracer.log(.trace, "\(request.method) \(tracer.redaction.redact(url: request.url)) headers", metadata: headers)
        }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await base.perform(request)
            let elapsed = start.duration(to: clock.now)
            let event = TraceEvent.Request(
                method: request.method, route: route, host: request.url.traceHost, status: response.status,
                durationMs: elapsed.traceMilliseconds, bytesIn: Int64(response.body.count), bytesOut: Int64(request.body?.count ?? 0),
                error: nil, attempt: request.attempt
            )
            tracer.record(TraceEvent(traceID: traceID, .request(event)))
            if logging.isEnabled(.debug) {
                tracer.log(.debug, "\(request.method) \(route) -> \(response.status) (\(event.durationMs.traceFormattedMilliseconds) ms)")
            }
            return response
        } catch {
            let elapsed = start.duration(to: clock.now)
            let identity = ErrorIdentity.of(error)
            let event = TraceEvent.Request(
                method: request.method, route: route, host: request.url.traceHost, status: nil,
                durationMs: elapsed.traceMilliseconds, bytesIn: nil, bytesOut: Int64(request.body?.count ?? 0),
                error: identity, attempt: request.attempt
            )
            tracer.record(TraceEvent(traceID: traceID, .request(event)))
            tracer.log(.warning, "\(request.method) \(route) failed after \(event.durationMs.traceFormattedMilliseconds) ms: \(identity): \(error)")
            throw error
        }
    }
}

extension Duration {
    /// The duration in milliseconds, with sub-millisecond precision.
    var traceMilliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

extension Double {
    /// One decimal, as in `12.4`.
    var traceFormattedMilliseconds: String {
        String((self * 10).rounded() / 10)
    }
}
