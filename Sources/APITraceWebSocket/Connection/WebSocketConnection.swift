import APITraceCapture
import APITraceFormat
public import Foundation

/// A WebSocket client that reconnects with backoff, pings a quiet connection, bounds what a server
/// can make it hold, and traces every connect, close and reconnect as `websocket` events.
///
/// One sequence of events carries everything, so an app filters or maps one stream instead of
/// juggling delegates:
///
/// ```swift
/// let connection = WebSocketConnection(url: URL(string: "wss://api.example.com/live")!)
/// Task {
///     for try await event in connection.events() {
///         switch event {
///         case .connected: try await connection.send(text: #"{"subscribe":"news"}"#)
///         case .text(let text): print(text)
///         case .disconnected(let close): print("closed \(close.code) by \(close.closedBy)")
///         case .reconnecting(let attempt, let delay): print("attempt \(attempt) in \(delay)")
///         default: break
///         }
///     }
/// }
/// // later
/// await connection.close()
/// ```
///
/// Nothing connects until ``events()`` or ``start()`` is called. Message content never reaches a
/// trace: only counts, sizes, codes and times (Docs/trace-format.md, `websocket`).
public final class WebSocketConnection: Sendable {
    /// What the client connects to, how it reconnects and its limits.
    public let configuration: Configuration

    struct Shared {
        var started = false
        var closing: (code: Int, reason: String?)?
        var link: WebSocketLink?
        var task: Task<Void, Never>?
        var pingID: UInt64 = 1 << 32
    }

    let shared = Locked(Shared())
    let buffer: WebSocketEventBuffer

    /// Creates a client; it connects on ``start()`` or ``events()``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        buffer = WebSocketEventBuffer(capacity: configuration.bufferedMessages)
        buffer.onReaderGone { [weak self] in
            guard let self else { return }
            Task { await self.close(code: 1001, reason: nil) }
        }
    }

    /// Creates a client for `url` with the default configuration.
    public convenience init(url: URL) {
        self.init(configuration: Configuration(url: url))
    }

    deinit {
        shared.withLock { $0.task?.cancel() }
    }

    /// The events, in order, for one reader; starts the client if needed.
    public func events() -> WebSocketEvents {
        start()
        return WebSocketEvents(buffer: buffer)
    }

    /// Starts connecting; does nothing when already started or closed.
    public func start() {
        let begin = shared.withLock { s -> Bool in
            guard !s.started, s.closing == nil else { return false }
            s.started = true
            return true
        }
        guard begin else { return }
        let task = Task { await self.run() }
        shared.withLock { $0.task = task }
    }

    /// Sends a text message; returns once it is written. Throws ``WebSocketError/Code/notConnected``
    /// while no connection is open.
    public func send(text: String) async throws {
        try await currentLink().send(text: text, notConnected: notConnected)
    }

    /// Sends a binary message; returns once it is written.
    public func send(binary: Data) async throws {
        try await currentLink().send(binary: binary, notConnected: notConnected)
    }

    /// Sends a ping; its pong arrives as ``WebSocketEvent/pong(roundTrip:)``.
    public func ping() async throws {
        let link = try currentLink()
        let id = shared.withLock { s -> UInt64 in
            s.pingID += 1
            return s.pingID
        }
        link.stats.withLock {
            $0.pingID = id
            $0.pingSentAt = .now
        }
        link.send(.ping(id))
    }

    /// Closes for good: sends a close frame with `code` and `reason` on an open connection and waits
    /// for the server's answer (at most ``Configuration/closeTimeout``), or stops a pending reconnect.
    /// The sequence of events ends after its last `disconnected`.
    public func close(code: Int = 1000, reason: String? = nil) async {
        let (link, task, first) = shared.withLock { s -> (WebSocketLink?, Task<Void, Never>?, Bool) in
            let first = s.closing == nil
            if first { s.closing = (code, reason) }
            return (s.link, s.task, first)
        }
        if first {
            if let link, link.stats.withLock({ $0.openedAt != nil }) {
                link.send(.close(code: code, reason: reason))
            } else {
                task?.cancel()
            }
            if task == nil { buffer.finish() }
        }
        await task?.value
    }

    private func currentLink() throws -> WebSocketLink {
        let (link, closing) = shared.withLock { ($0.link, $0.closing) }
        if closing != nil { throw WebSocketError(code: .closed, url: configuration.redactedURL) }
        guard let link, link.stats.withLock({ $0.openedAt != nil && $0.end == nil }) else { throw notConnected }
        return link
    }

    var notConnected: WebSocketError { WebSocketError(code: .notConnected, url: configuration.redactedURL) }

    func trace(_ record: TraceEvent.WebSocket) {
        (configuration.tracer ?? APITracer.shared).recordWebSocket(record)
    }
}
