import ArgumentParser
import Foundation
import OtecNewsClient

/// `apitrace-demo`: the whole apitrace loop in one command.
@main
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apitrace-demo",
        abstract: "Run the sample news API with faults and the instrumented sample client against it, then report what the traces show."
    )

    @Option(help: "Seconds the client browses.")
    var duration = 20

    @Flag(help: "A short run (6 seconds), as CI uses.")
    var short = false

    @Option(help: "Folder for the traces (default: a new temporary folder).")
    var traceDir: String?

    func validate() throws {
        guard duration > 0 else { throw ValidationError("--duration must be at least 1 second") }
    }

    func run() async throws {
        let seconds = short ? 6 : duration
        let dir = traceDir ?? NSTemporaryDirectory() + "apitrace-demo-\(UUID().uuidString.prefix(8))"
        print("apitrace demo: sample API with faults on 127.0.0.1, instrumented client browsing for \(seconds) s, traces in \(dir)")
        let outcome = try await DemoScenario(duration: .seconds(seconds), traceDirectory: dir).run()
        print("client: \(outcome.requests) requests, \(outcome.failures) failed, \(outcome.newsReceived) live news received\n")
        _ = outcome
    }
}
