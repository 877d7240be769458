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
                textfile collector reads it; see Dashboards/README.md). Request series carry the files' app_version. \
                For periodic exports pass --state FILE: counters then only grow, each file's events are counted \
                once and deleted files stay counted, so rate() shows no false spikes when files are deleted.
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

        @Option(help: "With --format prometheus: keep the totals in this file between runs, so counters never fall when trace files are deleted (one state file per selection).")
        var state: String?

        func validate() throws {
            if state != nil, format != .prometheus { throw ValidationError("--state goes with --format prometheus only") }
        }

        /// What a state file counts: the filters that pick events, not the time ones (a state only adds new events).
        private var selection: String {
            let parts = [("route", filters.route), ("host", filters.host), ("app_version", filters.appVersion), ("session", session)]
                .compactMap { name, value in value.map { "\(name)=\($0)" } }
            return parts.isEmpty ? "all" : parts.joined(separator: " ")
        }

        func run() throws {
            let filter = try filters.filter()
            let sources = paths.isEmpty ? [TraceDirectory.default] : paths
            var cumulative = CumulativeExport(selection: selection)
            if let state {
                do { cumulative = try CumulativeExport.load(path: state, selection: selection) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            }
            var har = HARExporter(session: session)
            let session = session
            let reader = TraceExportReader(
                since: filter.since, until: filter.until, keepFile: filter.matches(header:),
                keepEvent: { filter.matches($0) && (session == nil || $0.session == session) })
            let read = format == .prometheus ? reader.read(sources, into: &cumulative) : reader.read(sources, into: &har)
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
            let data = format == .prometheus ? Data(cumulative.metrics.text().utf8) : har.archive()
            if let output {
                do { try AtomicFileWriter.write(data, to: output, permissions: 0o666) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }

    }
}
