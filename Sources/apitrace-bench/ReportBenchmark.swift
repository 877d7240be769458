import APITraceAnalysis
import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench report`: a full report against `gzip -dc` and DuckDB on the same files.
struct ReportBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Time apitrace report on a large synthetic trace against gzip -dc and DuckDB, with peak memory.",
        discussion: """
            Generates the trace once into the cache folder (deterministic, seed 1) and reuses it. Measures, in one run: \
            the report as a library call; `apitrace report --format json` as a child process (wall time and peak RSS); \
            `gzip -dc` of the same files to /dev/null; DuckDB's read_json_auto computing the per-route count, errors \
            and p50/p95/p99 (pip install duckdb). Best of --runs for each. Targets: faster than DuckDB, within 1.5x \
            of gzip -dc, peak RSS under 64 MB.
            """
    )

    @Option(help: "Events in the trace.")
    var events = 2_000_000

    @Option(help: "Files to split it over.")
    var files = 8

    @Option(help: "Folder for the generated trace (reused across runs).")
    var cache = ".build/bench-cache"

    @Option(help: "Runs of each measurement; the best is reported.")
    var runs = 3

    @Flag(help: "Skip DuckDB.")
    var skipDuckdb = false

    /// CPU seconds of the last ``best(_:)`` measurement.
    private nonisolated(unsafe) static var cpu = 0.0
    private var lastCPU: Double {
        get { Self.cpu }
        nonmutating set { Self.cpu = newValue }
    }

    func run() throws {
        // Bump the "g" number when the generator changes, so a stale cache is not reused.
        let folder = "\(cache)/report-g2-\(events)-\(files)"
        let paths = try prepare(folder)
        let compressed = paths.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
        let decompressed = paths.reduce(0) { $0 + TraceFileReader(path: $1).forEachRawLine { _, _ in true }.bytes }
        print("trace: \(paths.count) files, \(events) events, \(mb(decompressed)) MB JSON, \(mb(compressed)) MB gzipped, in \(folder)")
        print("cores: \(ProcessInfo.processInfo.activeProcessorCount), load average: \(loadAverage())")

        // 1. The library call.
        var summary = TraceSummary()
        let library = best {
            summary = TraceSummarizer().summarize(files: paths)
            _ = TraceReport(summary: summary, options: .init(sources: [folder])).render(.json)
        }
        guard summary.events == events else { throw ValidationError("the report counted \(summary.events) events, expected \(events)") }
        let libraryCPU = lastCPU
        print(row("apitrace report (library)", library, decompressed) + String(format: "   CPU %.2f s", libraryCPU))

        // 1b. Only decompressing and splitting lines, through the same reader on the same cores:
        // the floor the report's scanning sits on.
        let readerOnly = best {
            _ = ParallelTraceReader.map(paths) { reader in reader.forEachRawLine { _, _ in true }.lines }
        }
        let readerCPU = lastCPU
        print(row("reader only (inflate+split)", readerOnly, decompressed) + String(format: "   CPU %.2f s", readerCPU))

        // 2. The CLI as a child process, for wall time and peak memory.
        let apitrace = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apitrace").path
        var cli: (seconds: Double, rssKB: Int)?
        if FileManager.default.isExecutableFile(atPath: apitrace) {
            cli = bestChild([apitrace, "report", "--format", "json", "--output", "/dev/null", folder])
            print(row("apitrace report (CLI)", cli!.seconds, decompressed) + String(format: "   peak RSS %.1f MB", Double(cli!.rssKB) / 1024))
        } else {
            print("apitrace report (CLI): not measured, build it first: swift build -c release --product apitrace")
        }

        // 3. gzip -dc.
        let gzip = bestChild(["/bin/sh", "-c", "gzip -dc " + paths.map(shellQuoted).joined(separator: " ") + " > /dev/null"])
        print(row("gzip -dc > /dev/null", gzip.seconds, decompressed))

        // 4. DuckDB.
        var duck: Double?
        if !skipDuckdb {
            if child(["/usr/bin/env", "python3", "-c", "import duckdb"]).status != 0 {
                print("DuckDB: not installed; install it with: pip install duckdb")
            } else {
                duck = try duckDB(folder)
                print(row("DuckDB per-route table", duck!, decompressed))
            }
        }

        print("")
        let reportTime = cli?.seconds ?? library
        print(String(format: "report / reader only: %.2fx wall, %.2fx CPU (what scanning and counting add to decompression)", library / readerOnly, libraryCPU / readerCPU))
        print(String(format: "report / gzip -dc: %.2fx (target <= 1.5x)%@", reportTime / gzip.seconds, reportTime / gzip.seconds <= 1.5 ? "  ok" : "  MISSED"))
        if let duck {
            print(String(format: "report / DuckDB:   %.2fx (target < 1x)%@", reportTime / duck, reportTime < duck ? "  ok" : "  MISSED"))
        }
        if let cli {
            print(String(format: "peak RSS:          %.1f MB (target < 64 MB)%@", Double(cli.rssKB) / 1024, cli.rssKB < 64 * 1024 ? "  ok" : "  MISSED"))
        }
    }

    private func prepare(_ folder: String) throws -> [String] {
        let marker = folder + "/.complete"
        if !FileManager.default.fileExists(atPath: marker) {
            try? FileManager.default.removeItem(atPath: folder)
            print("generating \(events) events in \(files) files into \(folder) (once)...")
            let start = Date()
            let generator = SyntheticTraceGenerator(configuration: .init(events: events, files: files, seed: 1, meanIntervalMs: 50))
            let written = try generator.write(to: folder)
            _ = FileManager.default.createFile(atPath: marker, contents: Data())
            print(String(format: "generated in %.1f s", Date().timeIntervalSince(start)))
            return written
        }
        return TraceFileDiscovery.find([folder]).files
    }

    private func duckDB(_ folder: String) throws -> Double {
        let script = """
            import duckdb, sys, time
            duckdb.sql("SET enable_progress_bar = false")
            best = None
            for _ in range(\(runs)):
                start = time.perf_counter()
                rows = duckdb.sql('''
                    SELECT method, route, count(*) AS requests,
                           sum(CASE WHEN status IS NULL OR status >= 500 THEN 1 ELSE 0 END) AS errors,
                           quantile_cont(duration_ms, 0.5) AS p50, quantile_cont(duration_ms, 0.95) AS p95,
                           quantile_cont(duration_ms, 0.99) AS p99
                    FROM read_json_auto('\(folder)/*.jsonl.gz')
                    WHERE type = 'request' GROUP BY method, route''').fetchall()
                elapsed = time.perf_counter() - start
                best = elapsed if best is None else min(best, elapsed)
            print(best)
            """
        let result = child(["/usr/bin/env", "python3", "-c", script], captureOutput: true)
        let lastLine = result.output.split(separator: "\n").last.map(String.init) ?? ""
        guard result.status == 0, let seconds = Double(lastLine.trimmingCharacters(in: .whitespaces)) else {
            throw ValidationError("DuckDB failed (status \(result.status)): \(result.output)")
        }
        return seconds
    }

    /// Best wall time of `runs`; also prints the CPU time (user + system) of that run, which a
    /// loaded machine disturbs less than wall time.
    private func best(_ body: () -> Void) -> Double {
        let results = (0..<max(1, runs)).map { _ in
            let cpu = cpuSeconds()
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, cpuSeconds() - cpu)
        }
        lastCPU = results.map(\.1).min()!
        return results.map(\.0).min()!
    }

    private func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    private func bestChild(_ arguments: [String]) -> (seconds: Double, rssKB: Int) {
        let results = (0..<max(1, runs)).map { _ in child(arguments) }
        return (results.map(\.seconds).min()!, results.map(\.rssKB).max()!)
    }

    /// Spawns a process, waits for it with `wait4` to get its own peak RSS, and times it.
    private func child(_ arguments: [String], captureOutput: Bool = false) -> (status: Int32, seconds: Double, rssKB: Int, output: String) {
        let outputPath = NSTemporaryDirectory() + "apitrace-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, captureOutput ? outputPath : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return (127, 0, 0, "") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let output = captureOutput ? ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "") : ""
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exit, seconds, Int(usage.ru_maxrss), output)
    }

    private func row(_ name: String, _ seconds: Double, _ bytes: Int) -> String {
        name.padding(toLength: 28, withPad: " ", startingAt: 0) + String(format: "%7.3f s  %7.0f MB/s", seconds, Double(bytes) / 1e6 / seconds)
    }

    private func mb(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1e6) }

    private func shellQuoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    private func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }
}
