import APITraceCapture
import APITraceFormat
import APITraceTesting
import APITraceTestSupport
import APITraceWebSocket
import Foundation
import Testing

/// Peers that try to make the client hold unbounded memory, hang, or leak credentials.
@Suite("WebSocket connection: hostile peers", .serialized, .requires(.python("websockets")))
struct WebSocketHostilePeerTests {
    /// SwiftNIO's decoder refuses the frame at its header, sends 1009 and closes; swift-websocket 1.6.2
    /// does not pass that error on, so the client sees the connection end without a close frame from
    /// the peer (1006) and reconnects with backoff. What matters holds: nothing past the header is kept.
    @Test("a frame that claims 2^40 bytes: refused at its header, nothing of it kept, each end traced, reconnects with backoff")
    func endlessFrame() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let before = residentBytes()
        let connection = makeConnection(server.url("/endless-frame?wait=0.1"), traces: traces) { $0.maximumFrameSize = 64 << 10 }
        let (events, _) = try await collect(connection) { event, _ in
            if case .reconnecting(let attempt, _) = event { return attempt == 3 }
            return false
        }
        #expect(events.texts.isEmpty && events.compactMap { if case .binary(let b) = $0 { b } else { nil } }.isEmpty)
        #expect(Array(events.closes.prefix(2).map(\.code)) == [1006, 1006])
        let traced = traces.webSockets
        #expect(traced.filter { $0.phase == .close }.count >= 2)
        #expect(traced.filter { $0.phase == .reconnect }.count == 2)
        #expect(traced.filter { $0.phase == .close }.allSatisfy { $0.bytesIn == 0 })
        // Nothing of the frame is kept: every close above carried 0 bytes in. The test process is shared
        // with the other suites, so its resident size is only a sanity bound (a client that buffered
        // the frame would never reach the three 1006 closes above).
        #expect(residentBytes() - before < 1 << 30, "\(residentBytes() - before) bytes")
    }

    @Test("a message that never ends (one-byte continuation frames forever): closed with 1009 at the message limit")
    func endlessMessage() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/endless-message"), traces: traces) { $0.maximumMessageSize = 200_000 }
        let (events, error) = try await collect(connection)
        #expect((error as? WebSocketError)?.code == .messageTooLarge)
        #expect((error as? WebSocketError)?.limit == 200_000)
        #expect(events.texts.isEmpty)
        let close = try #require(traces.webSockets.first { $0.phase == .close })
        #expect(close.code == 1009)
        #expect(close.closedBy == "client")
        #expect(close.reason == "message_too_big")
    }

    @Test("a flood of frames to a reader that stops for a while: memory stays bounded, and every message arrives once")
    func floodToSlowReader() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let flood = 120_000, size = 1_000
        let connection = makeConnection(server.url("/flood?n=\(flood)&size=\(size)"), traces: traces) {
            $0.bufferedMessages = 64
            $0.pingInterval = nil
        }
        let baseline = residentBytes()
        var afterStall = 0, received = 0, wrongSize = 0
        // Counted, not kept: the test must not hold the flood itself.
        for try await event in connection.events() {
            guard case .text(let text) = event else { continue }
            received += 1
            if text.utf8.count != size { wrongSize += 1 }
            if received == 1 {
                // The reader stops for 5 s: an unbounded client would read on meanwhile (well over
                // 100 MB at this machine's pace); a bounded one holds 64 messages and leaves the rest to TCP.
                try await Task.sleep(for: .seconds(5))
                afterStall = residentBytes()
            }
        }
        #expect(received == flood)
        #expect(wrongSize == 0)
        // An unbounded client holds the whole flood (120 MB) after the stall on a quiet machine; the
        // bound leaves room for the other suites sharing this process's memory (61 MB of growth seen
        // in a full run with the bounded buffer).
        #expect(afterStall - baseline < flood * size * 3 / 4, "resident memory grew by \(afterStall - baseline) bytes while the reader stopped")
        let close = try #require(traces.webSockets.first { $0.phase == .close })
        #expect(close.messagesIn == flood)
        #expect(close.bytesIn == Int64(flood * size))
    }

    @Test("credentials go to the configured origin only: a redirect to another origin is not followed")
    func redirectToAnotherOrigin() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let other = try await WebSocketTestServer()
        defer { other.stop() }
        let traces = TestTracer()
        let target = other.url("/headers").absoluteString
        let connection = makeConnection(server.url("/redirect?to=\(target)"), traces: traces) {
            $0.headers = [("Authorization", "Bearer secret-token-1")]
            $0.reconnect.maximumFailedAttempts = 2
        }
        let (_, error) = try await collect(connection)
        #expect((error as? WebSocketError)?.code == .refused)
        // The server prints each handshake; its output may trail the client's end by a moment.
        try await waitUntil("two handshakes at the first server", seconds: 10) { server.handshakes.count >= 2 }
        #expect(server.handshakes.map(\.authorization) == ["Bearer secret-token-1", "Bearer secret-token-1"])
        #expect(other.handshakes.isEmpty)
        let lines = traces.events.map(\.jsonLine).joined(separator: "\n")
        #expect(!lines.contains("secret-token"))
        #expect(!String(describing: error!).contains("secret-token"))
    }

    @Test("the header hook runs before every attempt: a refreshed token on each reconnect, never in a trace")
    func headersRefreshedBeforeEachAttempt() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/headers?token=query-secret"), traces: traces) {
            $0.refreshHeaders = { attempt in [("Authorization", "Bearer token-\(attempt)")] }
            $0.reconnect.reconnectOnNormalClosure = true
        }
        let (events, _) = try await collect(connection) { event, _ in
            if case .text(let text) = event { return text.hasSuffix("-3") }
            return false
        }
        #expect(events.texts == ["Bearer token-1", "Bearer token-2", "Bearer token-3"])
        let lines = traces.events.map(\.jsonLine).joined(separator: "\n")
        #expect(!lines.contains("token-"))
        #expect(!lines.contains("query-secret"))
    }
}

/// The largest resident size seen, sampled by the reading loop.
final class PeakMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = 0
    private var peak = 0

    func count() -> Int { lock.withLock { seen += 1; return seen } }
    func sample() {
        let now = residentBytes()
        lock.withLock { peak = max(peak, now) }
    }
    var maximum: Int { lock.withLock { peak } }
}
