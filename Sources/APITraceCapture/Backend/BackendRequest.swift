public import Foundation

/// A request for an ``HTTPBackend``.
public struct BackendRequest: Sendable {
    /// HTTP method, such as `GET`.
    public var method: String
    /// Full URL, query included. Never written to a trace: only its host and route are.
    public var url: URL
    /// Route template such as `/apps/{id}`; `nil` lets ``TracingBackend`` normalize the path.
    public var route: String?
    /// Header fields.
    public var headers: [String: String]
    /// Body bytes, if any.
    public var body: Data?
    /// Seconds to wait for the response; `nil` uses the backend's default.
    public var timeout: TimeInterval?
    /// 1 for the first try, 2 for the first retry, and so on; written as `attempt`.
    public var attempt: Int

    /// Creates a request.
    public init(
        method: String = "GET", url: URL, route: String? = nil, headers: [String: String] = [:],
        body: Data? = nil, timeout: TimeInterval? = nil, attempt: Int = 1
    ) {
        self.method = method
        self.url = url
        self.route = route
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.attempt = attempt
    }
}
