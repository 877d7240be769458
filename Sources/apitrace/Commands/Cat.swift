import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace cat`: prints trace files as JSON Lines.
    struct Cat: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the events of trace files as JSON Lines (headers included).",
            discussion: """
                Reads .jsonl.gz and .jsonl files, and folders of them. Damaged files are read up to \
                the damage; a warning naming the file and byte offset goes to standard error.
                Exit status: 0 when every file was read whole, 1 when there were warnings, 2 when nothing could be read.
                """
        )

        @Argument(help: "Trace files or folders.")
        var paths: [String]

        @Flag(help: "Print only the events, without file headers.")
        var noHeaders = false

        func validate() throws {
            if paths.isEmpty { throw ValidationError("Name at least one trace file or folder.") }
        }

        func run() throws {
            let found = TraceFileDiscovery.find(paths)
            var warnings = found.warnings
            var usable = 0
            let stdout = StandardOutput()
            for path in found.files {
                let result = TraceFileReader(path: path).forEachLine { line, _ in
                    var out = JSONOutput()
                    switch line {
                    case .event(let event): event.encode(to: &out)
                    case .header(let header) where !noHeaders: header.encode(to: &out)
                    default: return
                    }
                    out.bytes.append(0x0A)
                    stdout.write(out.bytes)
                }
                if result.isUsable { usable += 1 }
                warnings.append(contentsOf: result.warnings)
            }
            stdout.flush()
            for warning in warnings { FileHandle.standardError.write(Data("apitrace: \(warning)\n".utf8)) }
            if usable == 0 { throw ExitCode(2) }
            if !warnings.isEmpty { throw ExitCode(1) }
        }
    }
}
