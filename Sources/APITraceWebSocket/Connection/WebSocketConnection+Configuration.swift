public import APITraceCapture
public import Foundation

extension WebSocketConnection {
    /// What a ``WebSocketConnection`` connects to, how it reconnects, and its limits.
    ///
    /// ```swift
    /// var configuration = WebSocketConnection.Configuration(url: URL(string: "wss://api.example.com/live")!)
    /// configuration.refreshHeaders = { _ in [("Authorization", "Bearer \(try await tokens.fresh())")] }
    /// configuration.pingInterval = .seconds(20)
    /// ```
    public struct Configuration: Sendable {
        /// The `ws` or `wss` URL.
        public var url: URL
        /// Handshake headers, sent on every attempt. Their values never reach traces or errors.
        public var headers: [(name: String, value: String)]
        /// Called before every attempt (the first included) with its number; the headers it returns
        /// replace ``headers`` for that attempt. The place to put a token that expires. Throwing
        /// counts as a failed attempt.
        public var refreshHeaders: (@Sendable (_ attempt: Int) async throws -> [(name: String, value: String)])?
        /// Subprotocols offered in `Sec-WebSocket-Protocol`.
        public var subprotocols: [String]
        /// Which close codes are retried and after how long.
        public var reconnect: WebSocketReconnectPolicy
        /// How often the client pings a connection; `nil` never. Default 30 s.
        public var pingInterval: Duration?
        /// A ping with no pong and no other frame from the peer within this time means the peer is
        /// gone: the connection counts as dropped (1006, trace reason `ping_timeout`). Default 10 s.
        public var pingTimeout: Duration
        /// Longest wait for the TCP, TLS and WebSocket handshakes. Default 15 s.
        public var handshakeTimeout: Duration
        /// Longest wait for the peer's answer to a close frame. Default 5 s.
        public var closeTimeout: Duration
        /// Largest frame accepted, in bytes; a bigger one closes the connection with 1009. Default 1 MiB.
        public var maximumFrameSize: Int
        /// Largest message accepted (all its frames), in bytes; a bigger one closes the connection with
        /// 1009 and ends ``WebSocketConnection/events()`` with ``WebSocketError/Code/messageTooLarge``. Default 4 MiB.
        public var maximumMessageSize: Int
        /// Messages held for a reader that is behind; past this the client stops reading the socket. Default 256.
        public var bufferedMessages: Int
        /// Which transport holds the connection.
        public var transport: Transport
        /// Route written in trace events. Default: the URL path with ids replaced by `{id}`.
        public var route: String
        /// Where `websocket` trace events go; `nil` means ``APITracer/shared`` at the time of each event.
        public var tracer: APITracer?

        /// Creates a configuration with the defaults above.
        public init(
            url: URL,
            headers: [(name: String, value: String)] = [],
            subprotocols: [String] = [],
            reconnect: WebSocketReconnectPolicy = WebSocketReconnectPolicy(),
            pingInterval: Duration? = .seconds(30),
            pingTimeout: Duration = .seconds(10),
            route: String? = nil,
            tracer: APITracer? = nil
        ) {
            self.url = url
            self.headers = headers
            self.refreshHeaders = nil
            self.subprotocols = subprotocols
            self.reconnect = reconnect
            self.pingInterval = pingInterval
            self.pingTimeout = pingTimeout
            self.handshakeTimeout = .seconds(15)
            self.closeTimeout = .seconds(5)
            self.maximumFrameSize = 1 << 20
            self.maximumMessageSize = 4 << 20
            self.bufferedMessages = 256
            self.transport = .automatic
            self.route = route ?? RouteNormalizer().normalize(url.path.isEmpty ? "/" : url.path)
            self.tracer = tracer
        }

        /// The URL without query, fragment or credentials, for messages.
        var redactedURL: String {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.path }
            components.query = nil
            components.fragment = nil
            components.user = nil
            components.password = nil
            return components.string ?? url.path
        }
    }

    /// Which transport holds the connection.
    public struct Transport: Sendable, Equatable {
        enum Value: Sendable, Equatable { case automatic, swiftWebSocket, urlSession }
        let value: Value

        /// `URLSessionWebSocketTask` on Apple platforms, swift-websocket's client elsewhere.
        public static let automatic = Transport(value: .automatic)
        /// swift-websocket's client (SwiftNIO), on every platform.
        public static let swiftWebSocket = Transport(value: .swiftWebSocket)
        #if canImport(Darwin)
        /// `URLSessionWebSocketTask`; Apple platforms only.
        public static let urlSession = Transport(value: .urlSession)
        #endif

        func make() -> any WebSocketTransport {
            #if canImport(Darwin)
            if value != .swiftWebSocket { return URLSessionWebSocketTransport() }
            #endif
            return SwiftWebSocketTransport()
        }
    }
}
