import APITraceCapture
import APITraceFormat
import APITraceTesting
import APITraceTestSupport
import APITraceWebSocket
import Foundation
import Testing

@Suite("WebSocket connection: pings", .serialized, .requires(.python("websockets")))
struct WebSocketPingTests {
    @Test("pings answered: round trips reach the app and the trace")
    func pingsAnswered() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/echo"), traces: traces) {
            $0.pingInterval = .milliseconds(100)
            $0.pingTimeout = .seconds(5)
        }
        let counter = PeakMemory()
        let (events, error) = try await collect(connection) { event, connection in
            if case .connected = event { try? await connection.ping() }
            if case .pong = event { return counter.count() >= 3 }
            return false
        }
        #expect(error == nil)
        #expect(events.pongs.count >= 3)
        // Loopback round trips; the bound leaves room for a suite that loads both cores.
        #expect(events.pongs.allSatisfy { $0 >= .zero && $0 < .seconds(30) }, "\(events.pongs)")
        let close = try #require(traces.webSockets.first { $0.phase == .close })
        // The trace carries the pings and their round trip (its count may lag the app's last pong at close).
        #expect((close.pings ?? 0) >= 1)
        #expect((close.pingRTTMs ?? 0) > 0)
        #expect(close.closedBy == "client")
    }

    @Test("a peer that stops answering pings counts as dropped: 1006, ping_timeout, one reconnect per drop")
    func silentPeer() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/silent"), traces: traces) {
            $0.pingInterval = .milliseconds(150)
            $0.pingTimeout = .milliseconds(300)
            $0.closeTimeout = .milliseconds(300)
        }
        let (events, _) = try await collect(connection) { event, _ in
            if case .reconnecting(let attempt, _) = event { return attempt == 3 }
            return false
        }
        #expect(events.reconnects == [2, 3])
        let traced = traces.webSockets
        let timeouts = traced.filter { $0.phase == .close && $0.reason == "ping_timeout" }
        #expect(timeouts.count == 2)
        #expect(timeouts.allSatisfy { $0.code == 1006 && $0.closedBy == "client" })
        #expect(timeouts.allSatisfy { ($0.silenceMs ?? 0) >= 300 })
        #expect(traced.filter { $0.phase == .reconnect }.count == 2)
    }
}
