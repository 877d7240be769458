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
    public let tracer: APITracer
    /// Adds a W3C `traceparent` header (unless the request has one) and writes its trace id as `trace_id`.
    public var injectsTraceParent: Bool
    /// Makes routes for requests without a template.
    public var normalizer: RouteNormalizer

    /// Wraps `base`.
    public init(_ base: Base, tracer: APITracer = .shared, injectsTraceParent: Bool = false, normalizer: RouteNormalizer = RouteNormalizer()) {
        self.base = base
        self.tracer = tracer
        self.injectsTraceParent = injectsTraceParent
        self.normalizer = normalizer
    }

    public func perform(_ request: BackendRequest) async throws -> BackendResponse {
        var request = request
        var existing: String?
        if injectsTraceParent {
            existing = request.headers["traceparent"] ?? request.headers.first(where: { $0.key.lowercased() == "traceparent" })?.value
        }
        let traced = tracer.startRequest(
            method: request.method, url: request.url, route: request.route, normalizer: normalizer,
            attempt: request.attempt, bytesOut: Int64(request.body?.count ?? 0),
            traceParent: existing, injectsTraceParent: injectsTraceParent
        )
        if let header = traced.traceParentHeader { request.headers["traceparent"] = header }
        if tracer.logging.isEnabled(.trace) {
            let headers = tracer.redaction.redact(headers: request.headers)
            tracer.log(.trace, "\(request.method) \(tracer.redaction.redact(url: request.url)) headers", metadata: headers)
        }
        do {
            let response = try await base.perform(request)
            traced.finish(status: response.status, bytesIn: Int64(response.body.count))
            return response
        } catch {
            traced.fail(error)
            throw error
        }
    }
}

extension Double {
    /// One decimal, as in `12.4`.
    var traceFormattedMilliseconds: String {
        String((self * 10).rounded() / 10)
    }

    /// Milliseconds as seconds with two decimals, as in `1.50 s`: the connection clients' log lines.
    package var traceFormattedSeconds: String {
        let hundredths = Int((self / 10).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }
}
