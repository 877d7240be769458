import APITraceSynthetic
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace generate`: writes synthetic trace files.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write realistic synthetic trace files (deterministic for a seed), for demos, tests and benchmarks."
        )

        @Option(help: "Events in all files together.")
        var events = 1000

        @Option(help: "Files to split them over.")
        var files = 1

        @Option(help: "Random seed; the same seed writes the same files.")
        var seed: UInt64 = 1

        @Option(help: "Folder to write into (created when missing).")
        var out: String

        @Option(help: "Time between events on average (a duration: 50ms, 2s).")
        var interval = DurationArgument("50ms")

        @Option(help: "Mark successful requests as sampled at this rate (0-1).")
        var sampleRate: Double?

        func validate() throws {
            if events < 0 { throw ValidationError("--events must be 0 or more.") }
            if files < 1 { throw ValidationError("--files must be 1 or more.") }
            if interval.milliseconds <= 0 { throw ValidationError("--interval must be above 0.") }
            if let sampleRate, !(sampleRate > 0 && sampleRate <= 1) { throw ValidationError("--sample-rate must be in (0, 1].") }
        }

        func run() throws {
            let generator = SyntheticTraceGenerator(configuration: .init(
                events: events, files: files, seed: seed, meanIntervalMs: Double(interval.milliseconds), sampleRate: sampleRate))
            let paths = try generator.write(to: out)
            for path in paths { print(path) }
        }
    }
}
