import APITraceCapture
import Foundation
import HTTPTypes
import OpenAPIRuntime

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
/// The route comes from ``routes`` by operation id, otherwise from the path with ids replaced by
/// ``APITraceCapture/RouteNormalizer``. The duration ends when the response head arrives: the body
/// is streamed to the caller afterwards. `bytes_in` is the response's known length or `Content-Length`.
public struct TracingClientMiddleware: ClientMiddleware {
    /// Where events go.
    public let tracer: Tracer
    /// Route templates by operation id, such as `["getApp": "/apps/{id}"]`.
    public var routes: [String: String]
    /// Makes routes for operations not in ``routes``.
    public var normalizer: RouteNormalizer
    /// Adds a W3C `traceparent` header (unless the request has one) and writes its trace id as `trace_id`.
    public var injectsTraceParent: Bool

    /// Creates the middleware.
    public init(
        tracer: Tracer = .shared, routes: [String: String] = [:], normalizer: RouteNormalizer = RouteNormalizer(),
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
        var traceID: String?
        if injectsTraceParent {
            let name = HTTPField.Name("traceparent")!
            if let existing = request.headerFields[name], let parent = TraceParent(headerValue: existing) {
                traceID = parent.traceID
            } else {
                let parent = TraceParent.random()
                request.headerFields[name] = parent.headerValue
                traceID = parent.traceID
            }
        }
        let route = routes[operationID] ?? normalizer.normalize(Self.join(baseURL.path, request.path ?? "/"))
        let bytesOut: Int64? = switch body?.length {
        case .known(let count): count
        case .unknown: nil
        case nil: 0
        }
        let method = request.method.rawValue
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let (response, responseBody) = try await next(request, body, baseURL)
            let elapsed = start.duration(to: clock.now)
            let bytesIn: Int64? = switch responseBody?.length {
            case .known(let count): count
            case .unknown: response.headerFields[.contentLength].flatMap { Int64($0) }
            case nil: 0
            }
            tracer.record(TraceEvent(traceID: traceID, .request(.init(
                method: method, route: route, host: baseURL.host, status: response.status.code,
                durationMs: Self.milliseconds(elapsed), bytesIn: bytesIn, bytesOut: bytesOut
            ))))
            tracer.log(.debug, "\(method) \(route) -> \(response.status.code) [\(operationID)]")
            return (response, responseBody)
        } catch {
            let elapsed = start.duration(to: clock.now)
            let identity = ErrorIdentity.of(error)
            tracer.record(TraceEvent(traceID: traceID, .request(.init(
                method: method, route: route, host: baseURL.host, status: nil,
                durationMs: Self.milliseconds(elapsed), bytesOut: bytesOut, error: identity
            ))))
            tracer.log(.warning, "\(method) \(route) failed [\(operationID)]: \(identity): \(error)")
            throw error
        }
    }

    private static func join(_ base: String, _ path: String) -> String {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        return trimmed + (path.hasPrefix("/") ? path : "/" + path)
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
