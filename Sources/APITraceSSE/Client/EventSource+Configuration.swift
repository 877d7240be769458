public import APITraceCapture
public import Foundation

extension EventSource {
    /// What an ``EventSource`` connects to and how it reconnects.
    ///
    /// ```swift
    /// var configuration = EventSource.Configuration(url: URL(string: "https://api.example.com/news/stream")!)
    /// configuration.headers = [("Authorization", "Bearer \(token)")]
    /// configuration.idleTimeout = .seconds(60)
    /// ```
    public struct Configuration: Sendable {
        /// The stream's URL.
        public var url: URL
        /// HTTP method. Default `GET`.
        public var method: String
        /// Extra request headers, sent on every connection. Their values never reach traces or errors.
        ///
        /// `Authorization`, `Proxy-Authorization`, `Cookie` and the names in ``secretHeaders`` are
        /// credentials: they never follow a redirect to another origin (scheme, host or port), as
        /// browsers' fetch behaves.
        public var headers: [(name: String, value: String)]
        /// More header names (any case) that carry credentials, such as `X-Api-Key`: dropped, like
        /// `Authorization` and `Cookie`, when a redirect leaves the stream's origin.
        public var secretHeaders: [String]
        /// Request body, for streams opened with `POST`.
        public var body: Data?
        /// Last event id to resume from on the first connection, as if the server had sent it.
        public var lastEventID: String
        /// Delays between reconnects.
        public var reconnect: ReconnectPolicy
        /// The longest line and largest event the client holds; a server that sends more gets its
        /// connection dropped (``EventSourceError/Code/lineTooLong``, ``EventSourceError/Code/eventTooLarge``,
        /// traced as `fail`) and reconnected with backoff. Default 1 MiB per line, 4 MiB per event.
        public var limits: ServerSentEventParser.Limits
        /// A connection that delivers no byte (not even a comment) for this long is dropped and
        /// reconnected (trace reason `idle_timeout`). Default 300 s.
        public var idleTimeout: Duration
        /// Keep reconnecting after a non-200 status or a wrong Content-Type instead of failing.
        /// Default `false`, as the spec says. HTTP 204 always stops.
        public var retryOnHTTPError: Bool
        /// Route written in trace events. Default: the URL path with ids replaced by `{id}` (``RouteNormalizer``, as for requests).
        public var route: String
        /// Where `sse` trace events go; `nil` means ``APITracer/shared`` at the time of each event.
        public var tracer: APITracer?

        /// Creates a configuration with the defaults above.
        public init(
            url: URL,
            method: String = "GET",
            headers: [(name: String, value: String)] = [],
            secretHeaders: [String] = [],
            body: Data? = nil,
            lastEventID: String = "",
            reconnect: ReconnectPolicy = ReconnectPolicy(),
            limits: ServerSentEventParser.Limits = ServerSentEventParser.Limits(),
            idleTimeout: Duration = .seconds(300),
            retryOnHTTPError: Bool = false,
            route: String? = nil,
            tracer: APITracer? = nil
        ) {
            self.url = url
            self.method = method
            self.headers = headers
            self.secretHeaders = secretHeaders
            self.body = body
            self.lastEventID = lastEventID
            self.reconnect = reconnect
            self.limits = limits
            self.idleTimeout = idleTimeout
            self.retryOnHTTPError = retryOnHTTPError
            self.route = route ?? RouteNormalizer().normalize(url.path)
            self.tracer = tracer
        }

        /// Lowercased names of the headers that never follow a redirect to another origin.
        var credentialHeaderNames: Set<String> {
            Set(["authorization", "proxy-authorization", "cookie"] + secretHeaders.map { $0.lowercased() })
        }

        /// The URL without query or fragment, for messages.
        var redactedURL: String {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.path }
            components.query = nil
            components.fragment = nil
            components.user = nil
            components.password = nil
            return components.string ?? url.path
        }
    }
}
