import APITraceAnalysis
import APITraceFormat
import APITraceSynthetic
import ArgumentParser
import Foundation

/// The incremental part of `apitrace-bench report`: `apitrace report` over a week-long folder with
/// the per-file summary cache, cold, warm, after new files arrived, and with `--since 2h`.
struct IncrementalReportBenchmark {
    let benchmark: ReportBenchmark

    func run() throws {
        guard let apitrace = benchmark.apitraceExecutable else {
            print("incremental report: not measured, build the CLI first: swift build -c release --product apitrace")
            return
        }
        let events = benchmark.weekEvents, files = benchmark.weekFiles
        let week: Int64 = 7 * 86_400_000
        let interval = Double(week) / Double(max(1, events))
        let start = TraceTimestamp(rfc3339: "2026-11-15T00:00:00Z")!
        let folder = "\(benchmark.cache)/report-week-g1-\(events)-\(files)"
        let generator = SyntheticTraceGenerator(configuration: .init(events: events, files: files, seed: 3, start: start, meanIntervalMs: interval))
        try prepare(folder) { try generator.write(to: folder) }
        // Ten more files of another producer, one rotation's worth of events each, right after the week.
        let perFile = events / max(1, files)
        let arrivals = SyntheticTraceGenerator(configuration: .init(
            events: perFile * 10, files: 10, seed: 4, start: start.adding(milliseconds: generator.spanMilliseconds), meanIntervalMs: interval))
        let arrived = folder + "/arrived"
        try? FileManager.default.removeItem(atPath: arrived)
        let bytes = TraceFileDiscovery.find([folder]).files.reduce(0) { $0 + (FileStatus(path: $1).map { Int($0.size) } ?? 0) }
        print("")
        print("incremental: \(files) files, \(events) events over 7 days, \(benchmark.mb(bytes)) MB gzipped, in \(folder)")
        print("cores: \(ProcessInfo.processInfo.activeProcessorCount), load average: \(benchmark.loadAverage())")

        let since = start.adding(milliseconds: generator.spanMilliseconds - 2 * 3_600_000).rfc3339
        let scratch = NSTemporaryDirectory() + "apitrace-bench-incremental-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: scratch); try? FileManager.default.removeItem(atPath: arrived) }
        var best: [String: Double] = [:]
        var bestCPU: [String: Double] = [:]
        var peakRSS: [String: Int] = [:]
        func report(_ name: String, _ arguments: [String], output: String) throws {
            let result = benchmark.child([apitrace, "report", "--format", "json", "--output", output] + arguments)
            guard result.status == 0 else { throw ValidationError("\(name): apitrace report exited with \(result.status)") }
            best[name] = min(best[name] ?? .infinity, result.seconds)
            bestCPU[name] = min(bestCPU[name] ?? .infinity, result.cpu)
            peakRSS[name] = max(peakRSS[name] ?? 0, result.rssKB)
        }
        for round in 1...max(1, benchmark.runs) {
            try? FileManager.default.removeItem(atPath: scratch)
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: arrived)
            let cache = scratch + "/cache"
            let out = { (name: String) in scratch + "/" + name + ".json" }
            try report("uncached (--no-cache)", ["--no-cache", folder], output: out("uncached"))
            try report("first run (cold cache)", ["--cache-dir", cache, folder], output: out("cold"))
            try report("second run (warm)", ["--cache-dir", cache, folder], output: out("warm"))
            try report("--since 2h (warm)", ["--cache-dir", cache, "--since", since, folder], output: out("since"))
            try report("--since 2h (--no-cache)", ["--no-cache", "--since", since, folder], output: out("since-uncached"))
            _ = try arrivals.write(to: arrived)
            try report("after 10 new files", ["--cache-dir", cache, folder], output: out("arrived"))
            try report("after 10 new files (--no-cache)", ["--no-cache", folder], output: out("arrived-uncached"))
            // The cache must not change a byte of the report.
            for (a, b) in [("uncached", "cold"), ("uncached", "warm"), ("since-uncached", "since"), ("arrived-uncached", "arrived")] {
                guard FileManager.default.contentsEqual(atPath: out(a), andPath: out(b)) else {
                    throw ValidationError("the \(b) report differs from the \(a) one (\(out(a)), \(out(b)))")
                }
            }
            let held = TraceSummaryCache(directory: cache).contents()
            if round == 1 {
                print("cache: \(held.entries) entries, \(benchmark.mb(Int(held.bytes))) MB (\(Int(held.bytes) / max(1, held.entries)) bytes each)")
            }
            print("round \(round) of \(benchmark.runs) done (load average \(benchmark.loadAverage()))")
        }
        let order = ["uncached (--no-cache)", "first run (cold cache)", "second run (warm)", "after 10 new files",
                     "after 10 new files (--no-cache)", "--since 2h (warm)", "--since 2h (--no-cache)"]
        for name in order {
            print(name.padding(toLength: 34, withPad: " ", startingAt: 0)
                  + String(format: "%8.3f s   CPU %6.2f s   peak RSS %5.1f MB", best[name]!, bestCPU[name]!, Double(peakRSS[name]!) / 1024))
        }
        // Wall time on a shared machine swings with the load; CPU time (user + system) much less.
        let first = best["first run (cold cache)"]!, firstCPU = bestCPU["first run (cold cache)"]!
        for name in ["second run (warm)", "after 10 new files", "--since 2h (warm)"] {
            let ratio = first / best[name]!, cpuRatio = firstCPU / bestCPU[name]!
            print(String(format: "%@ %5.1fx wall, %5.1fx CPU (target >= 20x)%@",
                         "first run / \(name):".padding(toLength: 40, withPad: " ", startingAt: 0), ratio, cpuRatio, ratio >= 20 ? "  ok" : "  MISSED"))
        }
        let cold = first / best["uncached (--no-cache)"]!, coldCPU = firstCPU / bestCPU["uncached (--no-cache)"]!
        print(String(format: "first run / uncached run:                 %5.2fx wall, %5.2fx CPU (target <= 1x)%@", cold, coldCPU, cold <= 1.05 ? "  ok" : "  MISSED"))
        print("all reports identical with and without the cache: yes")
    }

    private func prepare(_ folder: String, _ write: () throws -> [String]) throws {
        let marker = folder + "/.complete"
        guard !FileManager.default.fileExists(atPath: marker) else { return }
        try? FileManager.default.removeItem(atPath: folder)
        print("generating \(benchmark.weekEvents) events in \(benchmark.weekFiles) files into \(folder) (once)...")
        let seconds = try Measure.seconds { _ = try write() }
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        print(String(format: "generated in %.1f s", seconds))
    }
}
