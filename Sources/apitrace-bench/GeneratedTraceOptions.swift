import ArgumentParser

/// The generated trace a reading benchmark measures and how often: the options `report` and
/// `cat` share (`cat` reads the files `report` generates).
struct GeneratedTraceOptions: ParsableArguments {
    @Option(help: "Events in the trace.")
    var events = 2_000_000

    @Option(help: "Files to split it over.")
    var files = 8

    @Option(help: "Folder for generated traces (reused across runs, shared by the benchmarks).")
    var cache = ".build/bench-cache"

    @Option(help: "Runs of each measurement; the best is reported.")
    var runs = 3

    /// These options as arguments, to hand them to another benchmark.
    var arguments: [String] { ["--events", "\(events)", "--files", "\(files)", "--cache", cache, "--runs", "\(runs)"] }
}
