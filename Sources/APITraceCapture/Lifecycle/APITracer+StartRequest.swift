import APITraceFormat
public import Foundation

extension APITracer {
    /// Starts a request to `url`: the route is `route` when given, otherwise the URL's path with ids
    /// replaced by `normalizer`; the host is read from the URL. Never the URL itself.
    ///
    /// With `injectsTraceParent`, a request without a valid `traceParent` gets one to send
    /// (``TracedRequest/traceParentHeader``): a child of the caller's trace when
    /// ``Configuration/traceContext`` finds one (so the request joins it), otherwise a new random trace.
    /// A valid `traceParent` already on the request is kept and its trace id written.
    ///
    /// ```swift
    /// let request = tracer.startRequest(method: "GET", url: url, injectsTraceParent: true)
    /// if let header = request.traceParentHeader { urlRequest.setValue(header, forHTTPHeaderField: "traceparent") }
    /// ```
    public func startRequest(
        method: String, url: URL, route: String? = nil, normalizer: RouteNormalizer = RouteNormalizer(),
        attempt: Int = 1, bytesOut: Int64? = nil, traceParent: String? = nil, injectsTraceParent: Bool = false
    ) -> TracedRequest {
        var traceID: String?
        var spanID: String?
        var header: String?
        if let traceParent, let parent = TraceParent(headerValue: traceParent) {
            traceID = parent.traceID
            spanID = parent.parentID
        } else if injectsTraceParent {
            let parent = childTraceParent()
            traceID = parent.traceID
            spanID = parent.parentID
            header = parent.headerValue
        } else if let provider = traceContext, let current = provider.current() {
            traceID = current.traceID
        }
        return TracedRequest(
            tracer: self, method: method, route: route ?? url.traceRoute(normalizer), host: url.traceHost,
            attempt: attempt, bytesOut: bytesOut, traceID: traceID, traceParentHeader: header, startedAt: .now,
            spanID: spanID, port: url.tracePort
        )
    }

    /// Starts a request from parts already known, for adapters that are not handed a `URL`
    /// (a span's attributes, an OpenAPI operation). No header is injected; `spanID` is the request's
    /// own span id when the caller has one (written as `span_id`), `port` the server's.
    public func startRequest(
        method: String, route: String, host: String?, attempt: Int = 1, bytesOut: Int64? = nil,
        traceID: String? = nil, startedAt: ContinuousClock.Instant = .now, spanID: String? = nil, port: Int? = nil
    ) -> TracedRequest {
        TracedRequest(
            tracer: self, method: method, route: route, host: host, attempt: attempt, bytesOut: bytesOut,
            traceID: traceID, traceParentHeader: nil, startedAt: startedAt, spanID: spanID, port: port
        )
    }

    /// A `traceparent` for an outgoing request: same trace as the caller's context, new span id; or a new trace.
    func childTraceParent() -> TraceParent {
        guard let provider = traceContext, let current = provider.current() else { return TraceParent.random() }
        return TraceParent.child(of: current)
    }
}
