import APITraceCapture
import APITraceFormat
import APITraceWebSocket
import ArgumentParser
import Dispatch
import Foundation

extension APITrace.Listen {
    /// Whether the URL is a WebSocket one (`ws://` or `wss://`): `listen` then speaks WebSocket.
    var isWebSocket: Bool {
        guard let scheme = URL(string: url)?.scheme?.lowercased() else { return false }
        return scheme == "ws" || scheme == "wss"
    }

    func validateWebSocket() throws {
        guard let parsed = URL(string: url), parsed.host != nil else { throw ValidationError("'\(url)' is not a ws or wss URL.") }
        if lastEventID != nil { throw ValidationError("--last-event-id is for Server-Sent Events; a WebSocket URL has none.") }
        if idleTimeout.milliseconds <= 0 { throw ValidationError("--idle-timeout must be more than 0 seconds.") }
        if webSocket.maxAttempts < 1 { throw ValidationError("--max-attempts must be at least 1.") }
    }

    /// Prints each message (text as is, binary as base64; or one JSON object per line), reconnects
    /// as `APITraceWebSocket` does, stops on a normal close (1000), and exits 1 when the client gives up.
    func runWebSocket() async throws {
        var sinks: [any TraceSink] = [WebSocketLogSink()]
        let writer = traceDir.map { TraceFileWriter(configuration: .init(directory: $0, app: "apitrace listen")) }
        if let writer { sinks.append(writer) }
        let tracer = APITracer(sinks: sinks)
        APITracer.bootstrap(tracer)

        var configuration = WebSocketConnection.Configuration(url: URL(string: url)!, tracer: tracer)
        configuration.headers = headers.compactMap(Self.parseWebSocketHeader)
        // A silent peer: pinged every third of --idle-timeout, dropped when a ping goes unanswered for a third.
        let third = Duration.milliseconds(max(idleTimeout.milliseconds / 3, 10))
        configuration.pingInterval = third
        configuration.pingTimeout = third
        configuration.reconnect.maximumFailedAttempts = webSocket.maxAttempts
        let connection = WebSocketConnection(configuration: configuration)
        let signals = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                Task {
                    await connection.close(code: 1001)
                    tracer.flush()
                    writer?.close()
                    Foundation.exit(0)
                }
            }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }

        let stdout = StandardOutput()
        do {
            for try await event in connection.events() {
                let line: String?
                switch (event, format) {
                case (.text(let text), .text): line = text + "\n"
                case (.binary(let data), .text): line = data.base64EncodedString() + "\n"
                case (.text(let text), .jsonl): line = Self.jsonLine(type: "text", field: "data", text) + "\n"
                case (.binary(let data), .jsonl): line = Self.jsonLine(type: "binary", field: "base64", data.base64EncodedString()) + "\n"
                default: line = nil
                }
                if let line {
                    stdout.write(line)
                    stdout.flush()
                }
            }
        } catch {
            tracer.flush()
            writer?.close()
            FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
            throw ExitCode.failure
        }
        tracer.flush()
        writer?.close()
    }

    private static func jsonLine(type: String, field: String, _ value: String) -> String {
        let object = ["type": type, field: value]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private static func parseWebSocketHeader(_ header: String) -> (name: String, value: String)? {
        guard let colon = header.firstIndex(of: ":") else { return nil }
        let name = header[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        return (name, header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}

/// The options only a WebSocket URL uses.
struct WebSocketListenOptions: ParsableArguments {
    @Option(name: .customLong("max-attempts"), help: "WebSocket: failed connection attempts in a row before giving up (exit 1).")
    var maxAttempts: Int = 10
}

/// Prints `websocket` connection changes to standard error for `apitrace listen ws://...`.
struct WebSocketLogSink: TraceSink {
    func record(_ event: TraceEvent) {
        guard case .websocket(let webSocket) = event.payload else { return }
        FileHandle.standardError.write(Data("apitrace: \(webSocket.summary)\n".utf8))
    }
}
