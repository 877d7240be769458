import APITraceAnalysis
import APITraceExport
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace export`: traces as Prometheus metrics or as an HTTP Archive.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Export traces as OpenMetrics text for Prometheus, a HAR file for browser devtools, or OTLP for an OpenTelemetry pipeline.",
            discussion: """
                prometheus: request counts and errors, latency histograms per route \
                (http_client_request_duration_seconds), decode failures per entity and path, recorded errors, \
                SSE connection changes and dropped events, in the OpenMetrics text format (node_exporter's \
                textfile collector reads it; see Dashboards/README.md). Request series carry the files' app_version. \
                For periodic exports pass --state FILE: counters then only grow, each file's events are counted \
                once and deleted files stay counted, so rate() shows no false spikes when files are deleted.
                har: the requests of the traces (or of the sessions --session matches) as HAR 1.2, in start-time order. Traces hold routes, not \
                URLs, and never headers or bodies, so entries carry https://host/route, status, timings and sizes. \
                Written as a stream in bounded memory: requests beyond about 70,000 (10 MiB) wait in sorted temporary files in TMPDIR.
                otlp: requests as CLIENT spans, the other events as log records, and cumulative metrics, sent over \
                OTLP/HTTP to --endpoint (a base URL: /v1/traces, /v1/logs, /v1/metrics are appended; default \
                OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318), protobuf unless --otlp-protocol http/json, \
                gzip unless OTEL_EXPORTER_OTLP_COMPRESSION=none; headers from OTEL_EXPORTER_OTLP_HEADERS (never printed). \
                With --state FILE each event is sent once across runs; with --output FILE nothing is sent and the \
                OTLP JSON requests are written one per line instead. See Docs/otlp.md.
                Exit status: 0 when something was exported (warnings included), 1 when no usable trace was read, 64 for bad arguments.
                """
        )

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case prometheus, har, otlp
        }

        @Argument(help: "Trace files or folders (default: the default trace folder).")
        var paths: [String] = []

        @OptionGroup(title: "Filters")
        var filters: TraceFilterOptions

        @Option(help: "prometheus, har or otlp.")
        var format: Format

        @Option(help: "Only events of this session (most useful with --format har); \(TextPattern.help).")
        var session: String?

        /// `--session` in the one filter grammar of every command.
        var sessionPattern: TextPattern? { session.map(TextPattern.init) }

        @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
        var output: String?

        @Option(help: "With --format prometheus or otlp: keep the totals in this file between runs, so counters never fall when trace files are deleted and otlp sends each event once (one state file per selection and format).")
        var state: String?

        @Option(help: "With --format otlp: the OTLP/HTTP base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318).")
        var endpoint: String?

        @Option(name: .customLong("otlp-protocol"), help: "With --format otlp: http/protobuf (default) or http/json (default: OTEL_EXPORTER_OTLP_PROTOCOL).")
        var otlpProtocol: String?

        @Option(help: "With --format otlp: most spans and log records per request (default 8192 for protobuf, 4096 for JSON; requests also stay near 4 MiB).")
        var batchSize: Int?

        func validate() throws {
            if state != nil, format == .har { throw ValidationError("--state goes with --format prometheus or otlp") }
            if format != .otlp, endpoint != nil || otlpProtocol != nil { throw ValidationError("--endpoint and --otlp-protocol go with --format otlp") }
            if format == .otlp, endpoint != nil, output != nil { throw ValidationError("--endpoint sends, --output writes a file: pass one of them") }
            if let otlpProtocol, OTLPEndpoint.Encoding(rawValue: otlpProtocol) == nil {
                throw ValidationError("--otlp-protocol must be http/protobuf or http/json")
            }
            if let batchSize, !(1...100_000).contains(batchSize) { throw ValidationError("--batch-size must be between 1 and 100000") }
        }

        /// What a state file counts: the filters that pick events, not the time ones (a state only adds new events).
        var selection: String {
            let parts = [("route", filters.route), ("host", filters.host), ("app_version", filters.appVersion), ("session", session)]
                .compactMap { name, value in value.map { "\(name)=\($0)" } }
            return parts.isEmpty ? "all" : parts.joined(separator: " ")
        }

        func run() throws {
            if format == .otlp { return try runOTLP() }
            if format == .har { return try runHAR() }
            let filter = try filters.filter()
            let sources = paths.isEmpty ? [TraceDirectory.default] : paths
            var cumulative = CumulativeExport(selection: selection)
            if let state {
                do { cumulative = try CumulativeExport.load(path: state, selection: selection) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            }
            let sessionPattern = sessionPattern
            let reader = TraceExportReader(
                since: filter.since, until: filter.until, keepFile: filter.matches(header:),
                keepEvent: { filter.matches($0) && TextPattern.admits(sessionPattern, $0.session) })
            let read = reader.read(sources, into: &cumulative)
            for warning in read.warnings.map(\.description) { FileHandle.standardError.write(Data("apitrace: warning: \(warning)\n".utf8)) }
            guard read.usableFiles > 0 else {
                FileHandle.standardError.write(Data("apitrace: no usable trace file in \(sources.joined(separator: ", "))\n".utf8))
                throw ExitCode(1)
            }
            if let state {
                cumulative.forgetFiles(notIn: Set(read.filesFound))
                do { try cumulative.save(path: state) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            }
            let data = Data(cumulative.metrics.text().utf8)
            if let output {
                do { try AtomicFileWriter.write(data, to: output, permissions: 0o666) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }

    
        /// `--format har`: the requests held in start order in bounded memory, then streamed out.
        private func runHAR() throws {
            let filter = try filters.filter()
            let sources = paths.isEmpty ? [TraceDirectory.default] : paths
            var reader = TraceExportReader(since: filter.since, until: filter.until, keepFile: filter.matches(header:))
            if !filter.keepsEveryRequest { reader.keepRecord = { filter.matches(request: $0) } }
            var har = HARStream(session: sessionPattern)
            let read: TraceExportReader.Outcome
            do { read = try reader.read(sources, into: &har) } catch {
                FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                throw ExitCode(1)
            }
            for warning in read.warnings.map(\.description) { FileHandle.standardError.write(Data("apitrace: warning: \(warning)\n".utf8)) }
            guard read.usableFiles > 0 else {
                FileHandle.standardError.write(Data("apitrace: no usable trace file in \(sources.joined(separator: ", "))\n".utf8))
                throw ExitCode(1)
            }
            do {
                if let output {
                    let file = try AtomicFileWriter(path: output, permissions: 0o666)
                    try har.write { block in try file.write(block) }
                    try file.commit()
                } else {
                    let out = StandardOutput()
                    try har.write { out.write(block: $0) }
                }
            } catch {
                FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
}
}
