public import APITraceCapture
import APITraceWebSocket
public import Foundation

/// Live comments on a news item over a WebSocket, as the Otec app shows them under an article:
/// one `WebSocketConnection` whose connects, closes (code, who closed) and reconnects are traced.
public final class LiveComments: Sendable {
    private let connection: WebSocketConnection

    /// Connects to `ws://.../news/{id}/comments` under `baseURL` (a `ws://` or `wss://` URL).
    ///
    /// Pings every second with a short timeout, so a server that answers late counts as dropped.
    public init(baseURL: URL, newsID: Int, tracer: APITracer = .shared) {
        let configuration = WebSocketConnection.Configuration(
            url: baseURL.appendingPathComponent("news/\(newsID)/comments"),
            reconnect: WebSocketReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(2), resetAfter: .seconds(5)),
            pingInterval: .seconds(1), pingTimeout: .milliseconds(700),
            route: "/news/{id}/comments", tracer: tracer)
        connection = WebSocketConnection(configuration: configuration)
    }

    /// Reads comments until ``stop()`` (or the client gives up), calling `onComment` for each.
    public func run(onComment: @escaping @Sendable (String) -> Void) async {
        do {
            for try await event in connection.events() {
                if case .text(let text) = event { onComment(text) }
            }
        } catch {
            // The client gave up (refused, a policy close): the `fail` event is in the trace.
        }
    }

    /// Closes the connection with 1000 (normal).
    public func stop() async {
        await connection.close()
    }
}
