import APITraceFormat
import ArgumentParser

/// The `apitrace` command line: reads, summarizes and watches traces written by APITraceCapture.
@main
struct APITrace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apitrace",
        abstract: "Observability for Swift API clients: read, summarize and alert on apitrace trace files.",
        version: "0.1.0",
        // Each subcommand sets its `commandName`: a name derived from the type costs every run
        // `String(describing:)` of each command type, a search of the binary's conformance records
        // per type (about 1.5% of a cron `alert`).
        subcommands: [Report.self, Alert.self, Mute.self, Unmute.self, Listen.self, Export.self, Rules.self, Collect.self, Cat.self, Generate.self]
    )

    /// Runs with the arguments as the system passed them: a path that is not UTF-8 (`caf\xE9`)
    /// is kept as its bytes (``FileSystemPath``), not repaired into a name no file has.
    static func main() async {
        let arguments = (1..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { FileSystemPath.string(fromCString: $0) } }
        await main(arguments)
    }
}
