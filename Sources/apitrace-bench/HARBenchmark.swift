import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench har`: `apitrace export --format har` against `gzip -dc` on the same files, with
/// the export's peak memory.
struct HARBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har",
        abstract: "Time and peak memory of apitrace export --format har against gzip -dc on the same files, output to /dev/null.",
        discussion: """
            Generates (once, in --cache) a trace of about 300,000 requests by default. Rounds interleave the contenders; \
            the best of --runs is reported, wall time and CPU time (user + system: the export reads and renders on \
            up to 4 threads, so on a loaded machine its wall time moves towards its CPU time). \
            Targets: time within 2x gzip -dc, peak memory under 64 MiB.
            """
    )

    @Option(help: "Events in the trace (about 82 % of generated events are requests).")
    var events = 366_000

    @Option(help: "Files to split it over.")
    var files = 8

    @Option(help: "Folder for generated traces (reused across runs, shared by the benchmarks).")
    var cache = ".build/bench-cache"

    @Option(help: "Runs of each measurement; the best is reported.")
    var runs = 3

    func run() throws {
        let report = try ReportBenchmark.parse(["--events", "\(events)", "--files", "\(files)", "--cache", cache, "--runs", "\(runs)"])
        let folder = "\(cache)/report-g2-\(events)-\(files)"
        let paths = try report.prepare(folder)
        var requests = 0, decompressed = 0
        for path in paths {
            decompressed += TraceFileReader(path: path).forEachRecord { record, _ in
                if record.kind == .request { requests += 1 }
                return true
            }.bytes
        }
        print("trace: \(paths.count) files, \(events) events, \(requests) requests, \(report.mb(decompressed)) MB JSON, in \(folder)")
        print("cores: \(ProcessInfo.processInfo.activeProcessorCount), load average: \(report.loadAverage())")
        let apitrace = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apitrace").path
        guard FileManager.default.isExecutableFile(atPath: apitrace) else {
            throw ValidationError("build the CLI first: swift build -c release --product apitrace")
        }
        let contenders: [(String, [String])] = [
            ("gzip -dc", ["/bin/sh", "-c", "gzip -dc " + paths.map(report.shellQuoted).joined(separator: " ")]),
            ("apitrace export --format har", [apitrace, "export", "--format", "har", folder]),
        ]
        var best = [Double](repeating: .infinity, count: contenders.count)
        var bestCPU = [Double](repeating: .infinity, count: contenders.count)
        var peak = [Int](repeating: 0, count: contenders.count)
        for round in 1...max(1, runs) {
            for (i, contender) in contenders.enumerated() {
                let result = report.child(contender.1)
                guard result.status == 0 else { throw ValidationError("\(contender.0) exited with \(result.status)") }
                best[i] = min(best[i], result.seconds)
                bestCPU[i] = min(bestCPU[i], result.cpu)
                peak[i] = max(peak[i], result.rssKB)
            }
            print("round \(round) of \(runs) done (load average \(report.loadAverage()))")
        }
        for (i, contender) in contenders.enumerated() {
            print(contender.0.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(format: "%7.3f s  %.2fx gzip -dc  CPU %.3f s (%.2fx)  peak RSS %.1f MiB",
                         best[i], best[i] / best[0], bestCPU[i], bestCPU[i] / bestCPU[0], Double(peak[i]) / 1024))
        }
        let ratio = best[1] / best[0]
        let mib = Double(peak[1]) / 1024
        print(String(format: "HAR export / gzip -dc: %.2fx (target <= 2x)%@; peak RSS %.1f MiB (target < 64 MiB)%@",
                     ratio, ratio <= 2 ? "  ok" : "  MISSED", mib, mib < 64 ? "  ok" : "  MISSED"))
    }
}
