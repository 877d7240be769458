import ArgumentParser

@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apitrace-bench",
        abstract: "Measure apitrace against its neighbours. Build with -c release.",
        subcommands: [FormatBenchmark.self, Capture.self, SSEBenchmark.self, ReportBenchmark.self, CatBenchmark.self, OTLPBenchmark.self, AlertBenchmark.self, CollectBenchmark.self, IngestCountBenchmark.self, HARBenchmark.self, StoreBenchmark.self]
    )
}
