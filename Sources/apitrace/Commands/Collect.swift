import APITraceCollector
import APITraceExport
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace collect`: receives trace files from uploaders over HTTP and stores them by day.
    struct Collect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "collect",
            abstract: "Receive finished trace files from uploaders and store them under DIR/dt=YYYY-MM-DD/.",
            discussion: """
                POST /v1/traces with Authorization: Bearer <token> and a .jsonl.gz body stores the file \
                (201, or 200 when the same content is already stored). GET /health answers ok; \
                GET /metrics serves, in the OpenMetrics text format, the events of the stored files counted once \
                at ingest (the names of export --format prometheus) and the collector's own counters. \
                Stops gracefully on SIGTERM or SIGINT: uploads whose body is in are stored and answered, bodies \
                still arriving get --shutdown-grace. With --otlp-endpoint URL, every stored file is also \
                sent to that OTLP/HTTP endpoint from a bounded spool in DIR/.otlp-spool/ (headers from \
                OTEL_EXPORTER_OTLP_HEADERS, never printed); an upload is never refused because the endpoint is down. \
                See Docs/collection.md.
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

        @Option(help: "Largest ratio of decompressed to compressed bytes accepted (stops gzip bombs early; trace lines compress 8 to 50 times).")
        var maxDecompressionRatio = 200

        @Option(help: "Most uploads in progress at once; more get 503 with Retry-After.")
        var maxConcurrentUploads = 64

        @Option(help: "Most body bytes all uploads in progress may hold; more get 503 with Retry-After. At least --max-body-bytes.")
        var maxBytesInFlight = 256 << 20

        @Option(help: "Retry-After sent with a 503 (a duration, sent in whole seconds; a bare number is seconds).")
        var busyRetryAfter = DurationArgument("5s")

        @Option(help: "Time a client has to send a whole request head, \(TimeGrammar.durationHelp) (a bare number is seconds); slower connections are closed.")
        var headerTimeout = DurationArgument("10s")

        @Option(help: "Time a body may bring no byte before the connection is closed (a duration; a bare number is seconds).")
        var bodyIdleTimeout = DurationArgument("15s")

        @Option(help: "Time a whole body may take to arrive (a duration; a bare number is seconds).")
        var bodyTimeout = DurationArgument("5m")

        @Option(help: "Least bytes per second a body must bring over each --body-rate-window; slower connections are closed (0: no minimum).")
        var minBodyRate = 1024

        @Option(help: "Window the minimum body rate is measured over (a duration; a bare number is seconds).")
        var bodyRateWindow = DurationArgument("10s")

        @Option(help: "On SIGTERM, time a body still arriving has to finish before its connection is closed (a duration).")
        var shutdownGrace = DurationArgument("2s")

        @Flag(help: "Do not count the events of stored files into /metrics (only the collector's own counters are served).")
        var noIngestMetrics = false

        @Option(help: "This collector's name in the store (letters, digits, '.', '_', '-'), unique among the collectors running on it: its /metrics counters are kept in DIR/.collectors/<id>/ and survive a restart or a SIGKILL. Default: <hostname>-<port> when --listen names a port; with port 0, counters last as long as the process.")
        var instanceID: String?

        @Option(help: "Routes (url_template) with series of their own on /metrics; later ones are counted under (other).")
        var maxRoutes = 1000

        @Option(help: "Error identities with series of their own on /metrics; later ones are counted under (other).")
        var maxIdentities = 1000

        @Option(help: "Also send what is stored to this OTLP/HTTP endpoint (the base URL, as OTEL_EXPORTER_OTLP_ENDPOINT), off the request path.")
        var otlpEndpoint: String?

        @Option(help: "OTLP encoding: http/protobuf (default) or http/json.")
        var otlpProtocol: String?

        @Option(help: "Most bytes the OTLP spool holds; past it the oldest spooled uploads are dropped (and counted).")
        var otlpSpoolMaxBytes = 1 << 30

        @Option(help: "Most uploads the OTLP spool holds; past it the oldest are dropped (and counted).")
        var otlpSpoolMaxFiles = 10_000

        func validate() throws {
            if tokenFile == nil && tokenEnv == nil {
                throw ValidationError("Give the accepted token with --token-file FILE or --token-env NAME.")
            }
            if parsedListen == nil { throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:9090.") }
            for (name, value) in [("--header-timeout", headerTimeout), ("--body-idle-timeout", bodyIdleTimeout), ("--body-timeout", bodyTimeout), ("--body-rate-window", bodyRateWindow), ("--shutdown-grace", shutdownGrace)] where value.milliseconds <= 0 {
                throw ValidationError("\(name) must be above 0.")
            }
            if maxBodyBytes <= 0 || maxDecompressedBytes <= 0 || maxConcurrentUploads <= 0 || maxDecompressionRatio <= 0 || minBodyRate < 0 || maxRoutes < 2 || maxIdentities < 2 {
                throw ValidationError("The limits must be positive (--min-body-rate may be 0; --max-routes and --max-identities at least 2: one value and (other)).")
            }
            if let otlpProtocol, OTLPEndpoint.Encoding(rawValue: otlpProtocol) == nil {
                throw ValidationError("--otlp-protocol must be http/protobuf or http/json.")
            }
            if otlpSpoolMaxBytes <= 0 || otlpSpoolMaxFiles <= 0 {
                throw ValidationError("--otlp-spool-max-bytes and --otlp-spool-max-files must be positive.")
            }
            if maxBytesInFlight < maxBodyBytes {
                throw ValidationError("--max-bytes-in-flight (\(maxBytesInFlight)) must be at least --max-body-bytes (\(maxBodyBytes)), or no large file could ever be stored.")
            }
        }

        /// `<hostname>-<port>`: the scrape target's name, stable across restarts; nil for an ephemeral port.
        static func defaultInstanceID(port: Int) -> String? {
            guard port != 0 else { return nil }
            let host = String(ProcessInfo.processInfo.hostName.prefix(48).map { c -> Character in
                c.isASCII && (c.isLetter || c.isNumber || c == "." || c == "_" || c == "-") ? c : "_"
            }).trimmingCharacters(in: CharacterSet(charactersIn: "."))
            return (host.isEmpty ? "collector" : host) + "-\(port)"
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
            var forwarding: OTLPForwarding?
            if let otlpEndpoint {
                do {
                    let endpoint = try OTLPEndpoint.configure(endpoint: otlpEndpoint, encoding: otlpProtocol.flatMap(OTLPEndpoint.Encoding.init(rawValue:)))
                    forwarding = OTLPForwarding(endpoint: endpoint, maxSpoolBytes: otlpSpoolMaxBytes, maxSpoolFiles: otlpSpoolMaxFiles)
                } catch {
                    FileHandle.standardError.write(Data("apitrace collect: \(error)\n".utf8))
                    throw ExitCode(2)
                }
            }
            let collector: TraceCollector
            do {
                var configuration = TraceCollector.Configuration(
                    directory: dir, tokens: try tokens(), maxBodyBytes: maxBodyBytes,
                    maxDecompressedBytes: maxDecompressedBytes, maxDecompressionRatio: maxDecompressionRatio,
                    maxConcurrentUploads: maxConcurrentUploads,
                    maxBytesInFlight: maxBytesInFlight, busyRetryAfterSeconds: busyRetryAfter.wholeSeconds,
                    headerTimeout: headerTimeout.duration, bodyIdleTimeout: bodyIdleTimeout.duration,
                    minBodyBytesPerSecond: minBodyRate, bodyRateWindow: bodyRateWindow.duration,
                    shutdownGrace: shutdownGrace.duration,
                    bodyTimeout: bodyTimeout.duration, ingestMetrics: !noIngestMetrics,
                    metricLimits: .init(routes: maxRoutes, identities: maxIdentities))
                configuration.otlpForwarding = forwarding
                configuration.instanceID = instanceID ?? Self.defaultInstanceID(port: port)
                collector = try TraceCollector(configuration: configuration)
            } catch let error as CollectorSetupError {
                FileHandle.standardError.write(Data("apitrace collect: \(error)\n".utf8))
                throw ExitCode(2)
            }
            let directory = dir
            let forwardingTo = forwarding.map { ", forwarding to \($0.endpoint.displayName(.traces).dropLast(10))" } ?? ""
            try await collector.run(host: host, port: port) { bound in
                FileHandle.standardOutput.write(Data("apitrace collect: listening on http://\(host):\(bound)/v1/traces, storing in \(directory)\(forwardingTo)\n".utf8))
            }
        }
    }
}
