import APITraceAnalysis
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace cat`: prints the valid lines of trace files as JSON Lines, as they are in the files.
    struct Cat: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cat",
            abstract: "Print the events of trace files as JSON Lines (headers included), with filters for the common jq cases.",
            discussion: """
                Reads .jsonl.gz and .jsonl files, and folders of them. Each line is validated as every command reads it \
                and printed byte for byte; invalid lines are skipped with a warning naming the file and line. Damaged \
                files are read up to the damage; a warning naming the file and byte offset goes to standard error.
                --since/--until open only the files that can hold events in range. --sort merges the events of all \
                files in time order (without headers); it holds back only the events of files that overlap in time, \
                and past --sort-buffer of them sorts in runs spilled to temporary files in $TMPDIR (removed as it goes).
                Exit status: 0 when every file was read whole, 1 when there were warnings, 2 when nothing could be read.
                """
        )

        @Argument(help: "Trace files or folders.")
        var paths: [String]

        @Flag(help: "Print only the events, without file headers.")
        var noHeaders = false

        @Option(help: "Only events at or after this time: \(TimeGrammar.instantHelp).")
        var since: String?

        @Option(help: "Only events before this time, in the same grammar as --since.")
        var until: String?

        @Option(help: "Only events of this type (request, decode_failure, error, sse, log, dropped); repeat or separate with commas.")
        var type: [String] = []

        @Option(help: "Only events whose route matches this template; \(TextPattern.help).")
        var route: String?

        @Option(help: "Only events of this session; \(TextPattern.help).")
        var session: String?

        @Option(help: "Only events to this server host (the host field); \(TextPattern.help).")
        var host: String?

        @Flag(help: "Merge the events of all files in time order (implies --no-headers).")
        var sort = false

        @Option(help: "With --sort: megabytes of events held in memory before sorted runs spill to $TMPDIR.")
        var sortBuffer = 64

        func validate() throws {
            if paths.isEmpty { throw ValidationError("Name at least one trace file or folder.") }
            if sortBuffer < 1 || sortBuffer > 1 << 20 { throw ValidationError("--sort-buffer: expected megabytes from 1 to 1048576.") }
            do { _ = try filter() } catch { throw ValidationError("\(error)") }
        }

        private func filter() throws -> TraceLineFilter {
            try TraceLineFilter(since: since, until: until, types: type, route: route, session: session, host: host)
        }

        func run() throws {
            let filter = try filter()
            let found = TraceFileDiscovery.find(paths)
            let files = TraceFileSelection.select(
                found.files,
                since: filter.since.map { TraceTimestamp(millisecondsSince1970: $0) },
                until: filter.until.map { TraceTimestamp(millisecondsSince1970: $0) })
            var warnings = found.warnings
            var outputFailed = false
            let write: (UnsafeRawBufferPointer) -> Void = { bytes in
                guard !outputFailed else { return }
                outputFailed = !Self.writeAll(bytes)
            }
            let scans: [TraceFileReader.RecordScan]
            if sort {
                let merged: TraceLineMerger.Result
                do {
                    merged = try TraceLineMerger(filter: filter, memoryLimit: sortBuffer << 20).merge(files, to: write)
                } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(2)
                }
                scans = merged.scans
                if merged.outOfOrder > 0 {
                    FileHandle.standardError.write(Data("apitrace: \(merged.outOfOrder) events lay more than \(TraceFileSelection.slack / 1000) s before the start their file's name gives and were printed out of time order\n".utf8))
                }
            } else {
                scans = TraceLineCopier(filter: filter, headers: !noHeaders).copy(files, to: write)
            }
            let usable = scans.filter { $0.header != nil }.count
            for scan in scans { warnings += scan.warnings }
            for warning in warnings { FileHandle.standardError.write(Data("apitrace: \(warning)\n".utf8)) }
            if usable == 0 && !(files.isEmpty && found.files.count > 0) { throw ExitCode(2) }
            if !warnings.isEmpty { throw ExitCode(1) }
        }

        /// Writes to standard output; false once the reader has gone (a closed pipe: `| head`).
        private static func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(1, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return true
        }
    }
}
