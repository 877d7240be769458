import APITraceCollector
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace collect`: receives trace files from uploaders over HTTP and stores them by day.
    struct Collect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Receive finished trace files from uploaders and store them under DIR/dt=YYYY-MM-DD/.",
            discussion: """
                POST /v1/traces with Authorization: Bearer <token> and a .jsonl.gz body stores the file \
                (201, or 200 when the same content is already stored). GET /health answers ok; \
                GET /metrics serves the collector's counters in the OpenMetrics text format. \
                Stops gracefully on SIGTERM or SIGINT. See Docs/collection.md.
                """
        )

        @Option(help: "Address to listen on, HOST:PORT (port 0 picks a free one).")
        var listen = "127.0.0.1:9090"

        @Option(help: "Folder to store the trace files in.")
        var dir: String

        @Option(help: "File holding the accepted bearer tokens, one per line.")
        var tokenFile: String?

        @Option(help: "Environment variable holding the accepted bearer token.")
        var tokenEnv: String?

        @Option(help: "Largest upload accepted, in bytes.")
        var maxBodyBytes = 64 << 20

        @Option(help: "Largest decompressed size accepted, in bytes (stops gzip bombs).")
        var maxDecompressedBytes = 1 << 30

        @Option(help: "Most uploads in progress at once; more get 503 with Retry-After.")
        var maxConcurrentUploads = 64

        @Option(help: "Most body bytes all uploads in progress may hold; more get 503 with Retry-After. At least --max-body-bytes.")
        var maxBytesInFlight = 256 << 20

        @Option(help: "Retry-After sent with a 503, in seconds.")
        var busyRetryAfter = 5

        @Option(help: "Seconds a client has to send a whole request head; slower connections are closed.")
        var headerTimeout = 10

        @Option(help: "Seconds a body may bring no byte before the connection is closed.")
        var bodyIdleTimeout = 15

        @Option(help: "Seconds a whole body may take to arrive.")
        var bodyTimeout = 300

        func validate() throws {
            if tokenFile == nil && tokenEnv == nil {
                throw ValidationError("Give the accepted token with --token-file FILE or --token-env NAME.")
            }
            if parsedListen == nil { throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:9090.") }
            if maxBodyBytes <= 0 || maxDecompressedBytes <= 0 || maxConcurrentUploads <= 0 || busyRetryAfter < 0
                || headerTimeout <= 0 || bodyIdleTimeout <= 0 || bodyTimeout <= 0 {
                throw ValidationError("The limits and timeouts must be positive.")
            }
            if maxBytesInFlight < maxBodyBytes {
                throw ValidationError("--max-bytes-in-flight (\(maxBytesInFlight)) must be at least --max-body-bytes (\(maxBodyBytes)), or no large file could ever be stored.")
            }
        }

        private var parsedListen: (host: String, port: Int)? {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
                  (0...65535).contains(port) else { return nil }
            var host = String(listen[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return host.isEmpty ? nil : (host, port)
        }

        private func tokens() throws -> [String] {
            var tokens: [String] = []
            if let tokenFile {
                guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                    throw ValidationError("Cannot read the token file \(tokenFile).")
                }
                tokens += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            if let tokenEnv {
                guard let value = ProcessInfo.processInfo.environment[tokenEnv], !value.isEmpty else {
                    throw ValidationError("The environment variable \(tokenEnv) is not set or empty.")
                }
                tokens.append(value.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if tokens.isEmpty { throw ValidationError("No token found in the token file or variable.") }
            return tokens
        }

        func run() async throws {
            let (host, port) = parsedListen!
            let collector: TraceCollector
            do {
                collector = try TraceCollector(configuration: .init(
                    directory: dir, tokens: try tokens(), maxBodyBytes: maxBodyBytes,
                    maxDecompressedBytes: maxDecompressedBytes, maxConcurrentUploads: maxConcurrentUploads,
                    maxBytesInFlight: maxBytesInFlight, busyRetryAfterSeconds: busyRetryAfter,
                    headerTimeout: .seconds(headerTimeout), bodyIdleTimeout: .seconds(bodyIdleTimeout),
                    bodyTimeout: .seconds(bodyTimeout)))
            } catch let error as CollectorSetupError {
                FileHandle.standardError.write(Data("apitrace collect: \(error)\n".utf8))
                throw ExitCode(2)
            }
            let directory = dir
            try await collector.run(host: host, port: port) { bound in
                FileHandle.standardOutput.write(Data("apitrace collect: listening on http://\(host):\(bound)/v1/traces, storing in \(directory)\n".utf8))
            }
        }
    }
}
