import APITraceCapture
import APITraceFormat
import APITraceSSE
import ArgumentParser
import Dispatch
import Foundation

extension APITrace {
    /// `apitrace listen`: a `curl -N` for Server-Sent Events, with reconnects and a trace.
    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "listen",
            abstract: "Connect to a Server-Sent Events URL, print its events, reconnect like the APITraceSSE client.",
            discussion: """
                Prints each event as it arrives (text: an id/event/data block; jsonl: one JSON object per line) \
                and each connect, drop and reconnect on standard error. Sends Last-Event-ID on every reconnect, \
                honours the server's retry (never under 0.5 s), backs off with jitter, and treats a silent connection \
                as dropped. A line or event past its limit drops the connection and reconnects. --header values never \
                follow a redirect to another origin.
                Exit status: 0 when the server ends the stream for good (HTTP 204) or on Ctrl-C; \
                1 when the server answers something other than an event stream.
                """
        )

        /// How events are printed.
        enum Format: String, ExpressibleByArgument, CaseIterable {
            case text, jsonl
        }

        @Argument(help: "The stream's URL: http or https (Server-Sent Events), ws or wss (WebSocket).")
        var url: String

        @Option(name: .customLong("header"), help: ArgumentHelp("A request header, as 'Name: value'. Repeatable.", valueName: "header"))
        var headers: [String] = []

        @Option(name: .customLong("last-event-id"), help: "Resume after this event id (sent as Last-Event-ID).")
        var lastEventID: String?

        @Option(name: .customLong("trace-dir"), help: "Write the sse trace events (gzip JSON Lines) to this folder.")
        var traceDir: String?

        @Option(name: .customLong("max-line-bytes"), help: "Longest line the server may send (default 1 MiB).")
        var maximumLineBytes: Int = ServerSentEventParser.Limits().maximumLineBytes

        @Option(name: .customLong("max-event-bytes"), help: "Largest event data the server may send (default 4 MiB).")
        var maximumEventBytes: Int = ServerSentEventParser.Limits().maximumEventBytes

        @Option(help: "Output format: text or jsonl.")
        var format: Format = .text

        @OptionGroup var webSocket: WebSocketListenOptions

        @Option(name: .customLong("idle-timeout"), help: "Silence after which the connection counts as dropped (a duration; a bare number is seconds).")
        var idleTimeout = DurationArgument("5m")

        func validate() throws {
            if isWebSocket { return try validateWebSocket() }
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  parsed.host != nil
            else { throw ValidationError("'\(url)' is not an http or https URL.") }
            for header in headers where parseHeader(header) == nil {
                throw ValidationError("--header needs 'Name: value'; got a header without a colon or without a name.")
            }
            if idleTimeout.milliseconds <= 0 { throw ValidationError("--idle-timeout must be more than 0 seconds.") }
            if maximumLineBytes < 1 { throw ValidationError("--max-line-bytes must be at least 1.") }
            if maximumEventBytes < 1 { throw ValidationError("--max-event-bytes must be at least 1.") }
        }

        func run() async throws {
            if isWebSocket { return try await runWebSocket() }
            var sinks: [any TraceSink] = [ConnectionLogSink()]
            let writer = traceDir.map { TraceFileWriter(configuration: .init(directory: $0, app: "apitrace listen")) }
            if let writer { sinks.append(writer) }
            APITracer.bootstrap(APITracer(sinks: sinks))

            let headers = headers.compactMap(parseHeader)
            // Every --header is treated as a credential: none follows a redirect to another origin.
            let configuration = EventSource.Configuration(
                url: URL(string: url)!, headers: headers, secretHeaders: headers.map(\.name), lastEventID: lastEventID ?? "",
                limits: .init(maximumLineBytes: maximumLineBytes, maximumEventBytes: maximumEventBytes),
                idleTimeout: idleTimeout.duration)
            let source = EventSource(configuration: configuration)
            let signals = Self.stopOnSignals { source.close(); writer?.close() }
            defer { signals.forEach { $0.cancel() } }

            let stdout = StandardOutput()
            do {
                for try await event in source.events() {
                    switch format {
                    case .text: stdout.write(event.textBlock)
                    case .jsonl: stdout.write(event.jsonLine)
                    }
                    stdout.flush()
                }
            } catch {
                writer?.close()
                FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                throw ExitCode.failure
            }
            writer?.close()
        }

        private func parseHeader(_ header: String) -> (name: String, value: String)? {
            guard let colon = header.firstIndex(of: ":") else { return nil }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return (name, header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }

        /// Ctrl-C and SIGTERM: run `cleanup` (close the client, finish the trace file) and exit 0.
        private static func stopOnSignals(_ cleanup: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
            [SIGINT, SIGTERM].map { signalNumber in
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    cleanup()
                    Foundation.exit(0)
                }
                source.resume()
                return source
            }
        }
    }
}
