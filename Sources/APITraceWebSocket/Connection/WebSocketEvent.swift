public import Foundation

/// One thing that happened on a ``WebSocketConnection``: the one sequence an app reads.
///
/// ```swift
/// for try await event in connection.events() {
///     switch event {
///     case .text(let text): print(text)
///     case .disconnected(let close): print("closed", close.code, "by", close.closedBy)
///     default: break
///     }
/// }
/// ```
public enum WebSocketEvent: Sendable, Equatable {
    /// The handshake succeeded.
    case connected(WebSocketHandshake)
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(Data)
    /// The answer to a ``WebSocketConnection/ping()`` or to the client's keep-alive ping.
    case pong(roundTrip: Duration)
    /// A connection ended; a `reconnecting` event follows when the client reconnects.
    case disconnected(WebSocketClose)
    /// The client waits `delay`, then makes connection attempt `attempt`.
    case reconnecting(attempt: Int, delay: Duration)
}

/// What the server agreed to in the handshake.
public struct WebSocketHandshake: Sendable, Equatable {
    /// The connection attempt, 1 for the first.
    public var attempt: Int
    /// The subprotocol the server chose, when the transport reports it (`URLSessionWebSocketTask` does;
    /// swift-websocket's client does not negotiate subprotocols).
    public var subprotocol: String?
    /// The extensions in use, such as `permessage-deflate`, when the transport reports them.
    public var extensions: [String]

    /// Creates a handshake description.
    public init(attempt: Int, subprotocol: String? = nil, extensions: [String] = []) {
        self.attempt = attempt
        self.subprotocol = subprotocol
        self.extensions = extensions
    }
}

/// How a connection ended.
public struct WebSocketClose: Sendable, Equatable {
    /// Who ended it.
    public enum Initiator: String, Sendable, Equatable {
        /// This client sent the close frame (``WebSocketConnection/close(code:reason:)``, a message over the
        /// limit, or a peer that stopped answering pings).
        case client
        /// The server sent the close frame.
        case server
        /// Nobody: the connection dropped without a close frame (code 1006).
        case network
    }

    /// The close code: the one in the close frame, 1006 when there was none.
    public var code: Int
    /// The reason text of the close frame, if any. Shown to the app, never traced.
    public var reason: String?
    /// Who ended the connection.
    public var closedBy: Initiator
    /// The attempt that ended.
    public var attempt: Int

    /// Creates a close description.
    public init(code: Int, reason: String? = nil, closedBy: Initiator, attempt: Int) {
        self.code = code
        self.reason = reason
        self.closedBy = closedBy
        self.attempt = attempt
    }
}
