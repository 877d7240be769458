package import Foundation

/// One way of holding a WebSocket connection: swift-websocket's client (every platform) or
/// `URLSessionWebSocketTask` (Apple platforms). The connection's logic (reconnects, pings, limits,
/// tracing) lives above it, in ``WebSocketConnection``, the same for both.
package protocol WebSocketTransport: Sendable {
    /// Makes one connection attempt and holds it until it ends. Reports the handshake, messages,
    /// pongs and the peer's frames through `link`, writes what `link.commands` asks, and returns how
    /// it ended. Cancellation ends the attempt promptly.
    func connect(_ request: WebSocketRequest, link: WebSocketLink) async -> WebSocketAttemptEnd
}

/// What one connection attempt sends.
package struct WebSocketRequest: Sendable {
    /// The `ws`/`wss` URL.
    package var url: URL
    /// Handshake headers, credentials included (only ever sent to ``url``'s origin).
    package var headers: [(name: String, value: String)]
    /// Subprotocols offered in `Sec-WebSocket-Protocol`.
    package var subprotocols: [String]
    /// Largest frame accepted from the peer, in bytes.
    package var maximumFrameSize: Int
    /// How long to wait for the peer's answer to a close frame.
    package var closeTimeout: Duration
}

/// How one attempt ended, as the transport saw it.
package enum WebSocketAttemptEnd: Sendable, Equatable {
    /// The handshake never completed: `reason` is `refused` (the server answered without upgrading)
    /// or `network_error` (no TCP or TLS connection); `status` when the transport knows it.
    case notOpened(reason: String, status: Int?)
    /// An open connection ended with a close frame (`code` from it; 1005 when it had none) or without
    /// one (1006, `closedBy` ``WebSocketClose/Initiator/network``).
    case closed(code: Int, reason: String?, closedBy: WebSocketClose.Initiator)
}
