/// Why an ``EventSource`` gave up: the server answered with something that is not an event stream.
///
/// Messages name the method and the URL without its query (queries may carry tokens); header values
/// never appear.
public struct EventSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; new kinds may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable { case httpStatus = "http_status", contentType = "content_type" }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The status was not 200 (nor 204, which stops without an error).
        public static let httpStatus = Code(.httpStatus)
        /// The status was 200 but the Content-Type was not `text/event-stream`.
        public static let contentType = Code(.contentType)

        /// The trace `reason` for this code: `http_status` or `content_type`.
        public var description: String { value.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// The HTTP status of the response.
    public var status: Int
    /// The Content-Type of the response, if it had one.
    public var contentType: String?
    /// The method of the request.
    public var method: String
    /// The URL of the request without query or fragment.
    public var url: String

    /// Creates an error.
    public init(code: Code, status: Int, contentType: String?, method: String, url: String) {
        self.code = code
        self.status = status
        self.contentType = contentType
        self.method = method
        self.url = url
    }

    public var description: String {
        let found = code == .httpStatus
            ? "HTTP \(status)"
            : "Content-Type \(contentType.map { "'\($0)'" } ?? "missing")"
        return "\(method) \(url): the server answered \(found), but an event stream needs HTTP 200 with "
            + "Content-Type text/event-stream. Check the URL, method and credentials; set "
            + "EventSource.Configuration.retryOnHTTPError to keep retrying."
    }
}
