public import APITraceCapture
public import Foundation
public import HTTPTypes
public import OpenAPIRuntime

/// A swift-openapi-generator `ClientMiddleware` that records one `request` event per request,
/// with the same fields as ``APITraceCapture/TracingBackend``.
///
/// ```swift
/// let client = Client(
///     serverURL: try Servers.Server1.url(),
///     transport: URLSessionTransport(),
///     middlewares: [TracingClientMiddleware(tracer: .shared, routes: ["getApp": "/apps/{id}"])]
/// )
/// ```
///
/// The route comes from ``routes`` by operation id (read them from the OpenAPI document with
/// ``OpenAPIRoutes/load(contentsOf:)``), otherwise from the path with ids replaced by
/// ``APITraceCapture/RouteNormalizer``. The duration ends when the response head arrives: the body
/// is streamed to the caller afterwards. `bytes_in` is the response's known length or `Content-Length`.
///
/// Responses that fail to decode are recorded by ``APITraceCapture/APITracer/recordingDecodeFailures(entity:_:)``
/// around the client call, with the route this middleware chose.
public struct TracingClientMiddleware: ClientMiddleware {
    /// Where events go.
    public let tracer: APITracer
    /// Route templates by operation id, such as `["getApp": "/apps/{id}"]`.
    public var routes: [String: String]
    /// Makes routes for operations not in ``routes``.
    public var normalizer: RouteNormalizer
    /// Adds a W3C `traceparent` header (unless the request has one) and writes its trace id as `trace_id`.
    public var injectsTraceParent: Bool

    /// Creates the middleware.
    public init(
        tracer: APITracer = .shared, routes: [String: String] = [:], normalizer: RouteNormalizer = RouteNormalizer(),
        injectsTraceParent: Bool = false
    ) {
        self.tracer = tracer
        self.routes = routes
        self.normalizer = normalizer
        self.injectsTraceParent = injectsTraceParent
    }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        let route = routes[operationID] ?? normalizer.normalize(Self.join(baseURL.path, request.path ?? "/"))
        OpenAPICallContext.current?.route = route
        let bytesOut: Int64? = switch body?.length {
        case .known(let count): count
        case .unknown: nil
        case nil: 0
        }
        let traced: TracedRequest
        if injectsTraceParent {
            let name = HTTPField.Name("traceparent")!
            // The URL only carries the host here: the route is already known.
            traced = tracer.startRequest(
                method: request.method.rawValue, url: baseURL, route: route, bytesOut: bytesOut,
                traceParent: request.headerFields[name], injectsTraceParent: true
            )
            if let header = traced.traceParentHeader { request.headerFields[name] = header }
        } else {
            traced = tracer.startRequest(method: request.method.rawValue, url: baseURL, route: route, bytesOut: bytesOut)
        }
        do {
            let (response, responseBody) = try await next(request, body, baseURL)
            let bytesIn: Int64? = switch responseBody?.length {
            case .known(let count): count
            case .unknown: response.headerFields[.contentLength].flatMap { Int64($0) }
            case nil: 0
            }
            traced.finish(status: response.status.code, bytesIn: bytesIn)
            return (response, responseBody)
        } catch {
            traced.fail(error)
            throw error
        }
    }

    private static func join(_ base: String, _ path: String) -> String {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        return trimmed + (path.hasPrefix("/") ? path : "/" + path)
    }
}
