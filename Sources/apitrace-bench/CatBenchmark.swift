import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench cat`: `apitrace cat` against `gzip -dc` on the report benchmark's files.
struct CatBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cat",
        abstract: "Time apitrace cat (plain, filtered, sorted) against gzip -dc on the same files, output to /dev/null.",
        discussion: """
            Uses (and generates once) the trace of `apitrace-bench report`. Rounds interleave the contenders; the best of \
            --runs is reported. Target: cat without filters within 1.2x of gzip -dc.
            """
    )

    @OptionGroup var trace: GeneratedTraceOptions
    var events: Int { trace.events }
    var files: Int { trace.files }
    var cache: String { trace.cache }
    var runs: Int { trace.runs }

    func run() throws {
        let report = try ReportBenchmark.parse(trace.arguments)
        let folder = "\(cache)/report-g2-\(events)-\(files)"
        let paths = try report.prepare(folder)
        let decompressed = paths.reduce(0) { $0 + TraceFileReader(path: $1).forEachRawLine { _, _ in true }.bytes }
        print("trace: \(paths.count) files, \(events) events, \(report.mb(decompressed)) MB JSON, in \(folder)")
        print("cores: \(ProcessInfo.processInfo.activeProcessorCount), load average: \(report.loadAverage())")
        let apitrace = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apitrace").path
        guard FileManager.default.isExecutableFile(atPath: apitrace) else {
            throw ValidationError("build the CLI first: swift build -c release --product apitrace")
        }
        let contenders: [(String, [String])] = [
            ("gzip -dc", ["/bin/sh", "-c", "gzip -dc " + paths.map(report.shellQuoted).joined(separator: " ")]),
            ("apitrace cat", [apitrace, "cat"] + paths),
            ("cat --type request --route", [apitrace, "cat", "--type", "request", "--route", "/apps/*"] + paths),
            ("cat --session", [apitrace, "cat", "--session", "no-such-session"] + paths),
            ("cat --sort", [apitrace, "cat", "--sort"] + paths),
        ]
        var best = [Double](repeating: .infinity, count: contenders.count)
        for round in 1...max(1, runs) {
            for (i, contender) in contenders.enumerated() {
                let result = report.child(contender.1)
                guard result.status == 0 else { throw ValidationError("\(contender.0) exited with \(result.status)") }
                best[i] = min(best[i], result.seconds)
            }
            print("round \(round) of \(runs) done (load average \(report.loadAverage()))")
        }
        for (i, contender) in contenders.enumerated() {
            print(contender.0.padding(toLength: 28, withPad: " ", startingAt: 0)
                + String(format: "%7.3f s  %7.0f MB/s  %.2fx gzip -dc", best[i], Double(decompressed) / 1e6 / best[i], best[i] / best[0]))
        }
        let ratio = best[1] / best[0]
        print(String(format: "apitrace cat / gzip -dc: %.2fx (target <= 1.2x)%@", ratio, ratio <= 1.2 ? "  ok" : "  MISSED"))
    }
}
