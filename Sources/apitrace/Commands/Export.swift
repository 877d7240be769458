import APITraceAnalysis
import APITraceExport
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace export`: traces as Prometheus metrics or as an HTTP Archive.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export traces as OpenMetrics text for Prometheus, or as a HAR file for browser devtools.",
            discussion: """
                prometheus: request counts and errors, latency histograms per route \
                (http_client_request_duration_seconds), decode failures per entity and path, recorded errors, \
                SSE connection changes and dropped events, in the OpenMetrics text format (node_exporter's \
                textfile collector reads it; see Dashboards/README.md).
                har: the requests of the traces (or of one --session) as HAR 1.2. Traces hold routes, not \
                URLs, and never headers or bodies, so entries carry https://host/route, status, timings and sizes.
                Exit status: 0 when something was exported (warnings included), 1 when no usable trace was read, 64 for bad arguments.
                """
        )

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case prometheus, har
        }

        @Argument(help: "Trace files or folders (default: the default trace folder).")
        var paths: [String] = []

        @OptionGroup(title: "Filters")
        var filters: TraceFilterOptions

        @Option(help: "prometheus or har.")
        var format: Format

        @Option(help: "Only events of this session (most useful with --format har).")
        var session: String?

        @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
        var output: String?

        func run() throws {
            let filter = try filters.filter()
            let sources = paths.isEmpty ? [TraceDirectory.default] : paths
            let found = TraceFileDiscovery.find(sources)
            var warnings = found.warnings.map(\.description)
            var metrics = OpenMetricsExporter()
            var har = HARExporter(session: session)
            var usable = 0
            for path in TraceFileSelection.select(found.files, since: filter.since, until: filter.until) {
                var keep = true
                let result = TraceFileReader(path: path).forEachLine { line, _ in
                    switch line {
                    case .header(let header): keep = filter.matches(header: header)
                    case .event(let event) where keep && filter.matches(event) && (session == nil || event.session == session):
                        switch format {
                        case .prometheus: metrics.add(event)
                        case .har: har.add(event)
                        }
                    default: break
                    }
                }
                if result.isUsable { usable += 1 }
                warnings += result.warnings.map(\.description)
            }
            for warning in warnings { FileHandle.standardError.write(Data("apitrace: warning: \(warning)\n".utf8)) }
            guard usable > 0 else {
                FileHandle.standardError.write(Data("apitrace: no usable trace file in \(sources.joined(separator: ", "))\n".utf8))
                throw ExitCode(1)
            }
            let data = format == .prometheus ? Data(metrics.text().utf8) : har.archive()
            if let output {
                do { try data.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                    FileHandle.standardError.write(Data("apitrace: cannot write \(output): \(error.localizedDescription)\n".utf8))
                    throw ExitCode(1)
                }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }

    }
}
