import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

func readWebSocketTrace(_ folder: URL) -> [TraceEvent.WebSocket] {
    var events: [TraceEvent.WebSocket] = []
    for file in TraceFileDiscovery.find([folder.path]).files {
        _ = TraceFileReader(path: file).forEachEvent { event in
            if case .websocket(let webSocket) = event.payload { events.append(webSocket) }
        }
    }
    return events
}

@Suite("apitrace listen ws://, the built binary against a real WebSocket server", .serialized, .requires(.python("websockets")))
struct ListenWebSocketTests {
    @Test("prints every message once across drops and closes, reconnects, writes the trace, exits 0 on 1000")
    func listensUntilNormalClose() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let folder = TemporaryDirectory()
        let traceDir = URL(fileURLWithPath: folder.file("traces"))
        let url = server.url("/numbers?per=3&ends=drop,1011,1000&t=cli\(UUID().uuidString.prefix(6))").absoluteString
        let result = try await runApitrace(
            ["listen", url, "--header", "Authorization: Bearer s3cr3t", "--trace-dir", traceDir.path, "--format", "jsonl"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines == (1...9).map { #"{"data":"\#($0)","type":"text"}"# })
        #expect(result.stderr.contains("reconnecting in"))
        #expect(result.stderr.contains("connection closed by the server: 1011 server_error"))
        #expect(!result.stderr.contains("s3cr3t"))
        try await waitUntil("three handshakes", seconds: 10) { server.handshakes.count >= 3 }
        #expect(server.handshakes.map(\.authorization) == Array(repeating: "Bearer s3cr3t", count: 3))

        let trace = readWebSocketTrace(traceDir)
        #expect(trace.filter { $0.phase == .open }.count == 3)
        #expect(trace.filter { $0.phase == .reconnect }.count == 2)
        #expect(trace.filter { $0.phase == .close }.map(\.code) == [1006, 1011, 1000])
        #expect(trace.filter { $0.phase == .close }.map(\.closedBy) == ["network", "server", "server"])
        let raw = try TraceFileDiscovery.find([traceDir.path]).files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        #expect(!raw.isEmpty)
    }

    @Test("a server that refuses: retried --max-attempts times, then exit 1 with a message naming the URL")
    func refusedExitsNonZero() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let result = try await runApitrace(["listen", server.url("/refuse?status=401&token=abc").absoluteString, "--max-attempts", "2"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("refused"))
        #expect(result.stderr.contains("/refuse"))
        #expect(!result.stderr.contains("token=abc"))
        try await waitUntil("two handshakes", seconds: 10) { server.handshakes.count >= 2 }
        #expect(server.handshakes.filter { $0.path == "/refuse" }.count == 2)
    }

    @Test("text format prints the messages as they are")
    func textFormat() async throws {
        let server = try await WebSocketTestServer()
        defer { server.stop() }
        let result = try await runApitrace(["listen", server.url("/numbers?per=2&ends=1000&t=txt\(UUID().uuidString.prefix(6))").absoluteString])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout == "1\n2\n")
    }
}
