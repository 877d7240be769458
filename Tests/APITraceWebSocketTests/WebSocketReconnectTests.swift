import APITraceCapture
import APITraceFormat
import APITraceTesting
import APITraceTestSupport
import APITraceWebSocket
import Foundation
import Testing

/// Against the real `websockets` server: every end of a connection traced with its code and who
/// closed it, one traced reconnect per drop, and no message received twice.
@Suite("WebSocket connection: reconnects and close codes", .serialized, .requires(.python("websockets")))
struct WebSocketReconnectTests {
    @Test("drops without a close frame: reconnects once per drop, each message once and in order, every end traced")
    func dropsWithoutCloseFrame() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/numbers?per=5&ends=drop,drop,drop,1000&t=\(uniqueTag())"), traces: traces)
        let (events, error) = try await collect(connection)
        #expect(error == nil)
        #expect(events.texts == (1...20).map(String.init))
        #expect(events.closes.map(\.code) == [1006, 1006, 1006, 1000])
        #expect(events.closes.map(\.closedBy) == [.network, .network, .network, .server])
        #expect(events.reconnects == [2, 3, 4])

        let traced = traces.webSockets
        let closes = traced.filter { $0.phase == .close }
        #expect(closes.map(\.code) == [1006, 1006, 1006, 1000])
        #expect(closes.map(\.closedBy) == ["network", "network", "network", "server"])
        #expect(closes.map(\.reason) == ["abnormal", "abnormal", "abnormal", "normal"])
        #expect(closes.map(\.messagesIn) == [5, 5, 5, 5])
        #expect(closes.map(\.bytesIn) == [5, 4 + 2, 10, 10])  // "1"-"5", "6"-"9" and "10", "11"-"15", "16"-"20"
        #expect(traced.filter { $0.phase == .reconnect }.map(\.attempt) == [2, 3, 4])
        #expect(traced.filter { $0.phase == .open }.map(\.attempt) == [1, 2, 3, 4])
        #expect(traced.filter { $0.phase == .fail }.isEmpty)
        #expect(traced.allSatisfy { $0.route == "/numbers" })
    }

    @Test("1001 (going away) and 1011 (server error) reconnect; the server's codes and reasons reach the app, only the class reaches the trace")
    func goingAwayAndServerError() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/numbers?per=2&ends=1001,1011,1000&t=\(uniqueTag())"), traces: traces)
        let (events, error) = try await collect(connection)
        #expect(error == nil)
        #expect(events.texts == (1...6).map(String.init))
        #expect(events.closes.map(\.code) == [1001, 1011, 1000])
        #expect(events.closes.map(\.reason) == ["bye 1001", "bye 1011", "bye 1000"])
        #expect(events.closes.allSatisfy { $0.closedBy == .server })
        let closes = traces.webSockets.filter { $0.phase == .close }
        #expect(closes.map(\.reason) == ["going_away", "server_error", "normal"])
        #expect(closes.map(\.closedBy) == ["server", "server", "server"])
        let lines = traces.events.map(\.jsonLine).joined(separator: "\n")
        #expect(!lines.contains("bye"))
    }

    @Test("policy codes stop for good with a typed error, without reconnecting", arguments: [1008, 4001])
    func policyCodesStop(code: Int) async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/numbers?per=1&ends=\(code)&t=\(uniqueTag())"), traces: traces)
        let (events, error) = try await collect(connection)
        let failure = try #require(error as? WebSocketError)
        #expect(failure.code == .closedByPolicy)
        #expect(failure.closeCode == code)
        #expect(events.texts == ["1"])
        #expect(events.reconnects.isEmpty)
        let traced = traces.webSockets
        #expect(traced.map(\.phase) == [.open, .close, .fail])
        #expect(traced[1].code == code)
        try await waitUntil("the handshake line", seconds: 10) { server.handshakes.count >= 1 }
        try await Task.sleep(for: .milliseconds(300))  // time for a second one to show, were there one
        #expect(server.handshakes.count == 1)
    }

    @Test("1000 reconnects only when the app asks")
    func normalClosureWhenAsked() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/numbers?per=1&ends=1000&t=\(uniqueTag())"), traces: traces) {
            $0.reconnect.reconnectOnNormalClosure = true
        }
        let (events, _) = try await collect(connection) { event, _ in
            if case .text(let text) = event { return text == "3" }
            return false
        }
        #expect(events.texts == ["1", "2", "3"])
        #expect(events.reconnects == [2, 3])
        #expect(events.closes.last?.closedBy == .client)
    }

    @Test("a server that refuses the handshake: one traced end per attempt, a fail, a typed error, and the attempts the policy allows")
    func refusedHandshake() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/refuse?status=403"), traces: traces) {
            $0.reconnect.maximumFailedAttempts = 3
        }
        let (events, error) = try await collect(connection)
        let failure = try #require(error as? WebSocketError)
        #expect(failure.code == .refused)
        #expect(failure.attempts == 3)
        #expect(events.closes.count == 3)
        #expect(events.reconnects == [2, 3])
        let traced = traces.webSockets
        #expect(traced.map(\.phase) == [.close, .reconnect, .close, .reconnect, .close, .fail])
        #expect(traced.filter { $0.phase == .close }.allSatisfy { $0.reason == "refused" && $0.closedBy == "server" && $0.code == 1006 })
        try await waitUntil("three handshakes", seconds: 10) { server.handshakes.count >= 3 }
        #expect(server.handshakes.filter { $0.path == "/refuse" }.count == 3)
    }

    @Test("nobody listening: network errors, retried, then a typed error")
    func nobodyListening() async throws {
        let port = try freePort()
        let traces = TestTracer()
        let connection = makeConnection(URL(string: "ws://127.0.0.1:\(port)/x")!, traces: traces) {
            $0.reconnect.maximumFailedAttempts = 2
        }
        let (_, error) = try await collect(connection)
        #expect((error as? WebSocketError)?.code == .refused)
        let closes = traces.webSockets.filter { $0.phase == .close }
        #expect(closes.map(\.reason) == ["network_error", "network_error"])
        #expect(closes.map(\.closedBy) == ["network", "network"])
    }

    @Test("the app's close: a close frame with its code, answered by the server; traced as closed by the client with counts")
    func appCloses() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let traces = TestTracer()
        let connection = makeConnection(server.url("/echo"), traces: traces)
        let (events, error) = try await collect(connection) { event, connection in
            switch event {
            case .connected:
                try? await connection.send(text: "hello")
                try? await connection.send(binary: Data([1, 2, 3]))
                return false
            case .binary: return true
            default: return false
            }
        }
        #expect(error == nil)
        #expect(events.texts == ["hello"])
        #expect(events.contains(.binary(Data([1, 2, 3]))))
        #expect(events.closes.map(\.closedBy) == [.client])
        #expect(events.closes.map(\.code) == [1000])
        let close = try #require(traces.webSockets.first { $0.phase == .close })
        #expect(close.closedBy == "client")
        #expect(close.messagesIn == 2)
        #expect(close.messagesOut == 2)
        #expect(close.bytesIn == 8)
        #expect(close.bytesOut == 8)
        await #expect(throws: WebSocketError.self) { try await connection.send(text: "late") }
    }
}

