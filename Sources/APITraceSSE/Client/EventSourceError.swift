/// Why an ``EventSource`` gave up, or dropped a connection: the server answered with something that
/// is not an event stream, or sent a line or an event past ``ServerSentEventParser/Limits``.
///
/// Messages name the method and the URL without its query (queries may carry tokens); header values
/// never appear, and what the server sent (its Content-Type) is cut to a few dozen characters.
public struct EventSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; new kinds may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case httpStatus = "http_status", contentType = "content_type"
            case lineTooLong = "line_too_long", eventTooLarge = "event_too_large"
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The status was not 200 (nor 204, which stops without an error).
        public static let httpStatus = Code(.httpStatus)
        /// The status was 200 but the Content-Type was not `text/event-stream`.
        public static let contentType = Code(.contentType)
        /// A line was longer than ``ServerSentEventParser/Limits/maximumLineBytes``: the client dropped
        /// the connection and reconnects with backoff.
        public static let lineTooLong = Code(.lineTooLong)
        /// An event's data grew past ``ServerSentEventParser/Limits/maximumEventBytes``: the client
        /// dropped the connection and reconnects with backoff.
        public static let eventTooLarge = Code(.eventTooLarge)

        /// The trace `reason` for this code: `http_status`, `content_type`, `line_too_long` or `event_too_large`.
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
    /// For ``Code/lineTooLong`` and ``Code/eventTooLarge``: the limit, in bytes.
    public var limit: Int?

    /// Creates an error.
    public init(code: Code, status: Int, contentType: String?, method: String, url: String, limit: Int? = nil) {
        self.code = code
        self.status = status
        self.contentType = contentType
        self.method = method
        self.url = url
        self.limit = limit
    }

    public var description: String {
        switch code {
        case .lineTooLong, .eventTooLarge:
            let what = code == .lineTooLong
                ? "a line longer than \(limit ?? 0) bytes (EventSource.Configuration.limits.maximumLineBytes)"
                : "an event with more than \(limit ?? 0) bytes of data (EventSource.Configuration.limits.maximumEventBytes)"
            return "\(method) \(url): the server sent \(what); dropped the connection, reconnecting with backoff."
        default:
            let found = code == .httpStatus
                ? "HTTP \(status)"
                : "Content-Type \(contentType.map { "'\(TraceText.clip($0, maximumBytes: 64))'" } ?? "missing")"
            return "\(method) \(url): the server answered \(found), but an event stream needs HTTP 200 with "
                + "Content-Type text/event-stream. Check the URL, method and credentials; set "
                + "EventSource.Configuration.retryOnHTTPError to keep retrying."
        }
    }
}
