import ArgumentParser

/// The `apitrace` command line: reads, summarizes and watches traces written by APITraceCapture.
@main
struct APITrace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apitrace",
        abstract: "Observability for Swift API clients: read, summarize and alert on apitrace trace files.",
        version: "0.1.0",
        subcommands: [Report.self, Alert.self, Mute.self, Unmute.self, Listen.self, Export.self, Rules.self, Collect.self, Cat.self, Generate.self]
    )
}
