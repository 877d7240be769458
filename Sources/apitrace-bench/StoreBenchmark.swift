import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench store`: a week of traffic uploaded through a real `apitrace collect`, then
/// `report` and `alert` over its store, cold and warm (the caches of finished files).
struct StoreBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "report and alert over a week uploaded through apitrace collect: first run against the next (cached) ones."
    )

    @Option(help: "Producers (devices), each uploading one file an hour for a week.")
    var producers = 12

    @Option(help: "Events in the week, all producers together.")
    var events = 4_000_000

    @Option(help: "Runs of each measurement; the best is reported.")
    var runs = 3

    @Option(help: "Folder for the store (kept between runs: delete it to upload again).")
    var workDirectory = ".build/bench-cache/store-week"

    static let hours = 168
    static let end: Int64 = 1_795_348_800_000  // 2026-11-22T12:00:00Z

    func run() throws {
        let apitrace = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("apitrace").path
        guard FileManager.default.isExecutableFile(atPath: apitrace) else {
            throw ValidationError("build the CLI first: swift build -c release --product apitrace")
        }
        let store = workDirectory + "/store"
        try upload(into: store)
        let found = TraceFileDiscovery.find([store]).files
        let bytes = found.reduce(0) { $0 + (FileStatus(path: $1).map { Int($0.size) } ?? 0) }
        let sealed = found.filter { TraceFileIdentity(fileName: $0)?.isFinishedByConstruction == true }.count
        print("store: \(found.count) files (\(sealed) sealed), \(String(format: "%.1f", Double(bytes) / 1e6)) MB, \(events) events from \(producers) producers over 7 days (\(store))")
        print(String(format: "  %.1f bytes per event stored; %.2f MB per producer per day", Double(bytes) / Double(events), Double(bytes) / 1e6 / Double(producers) / 7))
        let now = TraceTimestamp(millisecondsSince1970: Self.end).rfc3339
        let since = TraceTimestamp(millisecondsSince1970: Self.end - 2 * 3_600_000).rfc3339
        let scratch = workDirectory + "/scratch"
        var best: [String: (wall: Double, cpu: Double)] = [:]
        func measure(_ name: String, _ arguments: [String], output: String? = nil) throws -> String {
            let result = ChildRun.run([apitrace] + arguments, captureOutput: output == nil)
            guard result.status == 0 || arguments.first == "alert" else { throw ValidationError("\(name): apitrace exited with \(result.status)") }
            let previous = best[name] ?? (.infinity, .infinity)
            best[name] = (min(previous.wall, result.seconds), min(previous.cpu, result.cpu))
            return output.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? result.output
        }
        let rules = workDirectory + "/rules.yaml"
        try "rules:\n  - name: api-errors\n    slo: 0.99\n  - name: apps-spike\n    scope: {route: \"/apps/{id}\"}\n    spike: {window: 30m, baseline: trailing_day}\n".write(toFile: rules, atomically: true, encoding: .utf8)
        for round in 1...max(1, runs) {
            try? FileManager.default.removeItem(atPath: scratch)
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            let cache = scratch + "/cache"
            let report = ["report", "--format", "json", "--until", now]
            let uncached = try measure("report --no-cache", report + ["--no-cache", "--output", scratch + "/u.json", store], output: scratch + "/u.json")
            let cold = try measure("report, first run", report + ["--cache-dir", cache, "--output", scratch + "/c.json", store], output: scratch + "/c.json")
            let warm = try measure("report, second run", report + ["--cache-dir", cache, "--output", scratch + "/w.json", store], output: scratch + "/w.json")
            let sinceUncached = try measure("report --since 2h --no-cache", report + ["--no-cache", "--since", since, "--output", scratch + "/su.json", store], output: scratch + "/su.json")
            let sinceWarm = try measure("report --since 2h, warm", report + ["--cache-dir", cache, "--since", since, "--output", scratch + "/sw.json", store], output: scratch + "/sw.json")
            guard uncached == cold, uncached == warm, sinceUncached == sinceWarm, !uncached.isEmpty else {
                throw ValidationError("a cached report differs from --no-cache (in \(scratch))")
            }
            // Cron alert: the first run counts every file; the next one (same state, its count cache) only the open files.
            let alert = ["alert", store, "--rules", rules, "--now", now, "--verbose"]
            let first = try measure("alert, first run", alert + ["--state", scratch + "/a.json"])
            try FileManager.default.copyItem(atPath: scratch + "/a.json.counts", toPath: scratch + "/b.json.counts")
            let next = try measure("alert, next cron run", alert + ["--state", scratch + "/b.json"])
            guard first == next, !first.isEmpty else { throw ValidationError("the cached alert run printed something else:\n\(first)\n---\n\(next)") }
            print("round \(round) of \(runs) done")
        }
        for name in ["report --no-cache", "report, first run", "report, second run", "report --since 2h --no-cache", "report --since 2h, warm", "alert, first run", "alert, next cron run"] {
            let b = best[name]!
            print(name.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: "%8.3f s   CPU %6.2f s", b.wall, b.cpu))
        }
        for (name, base, target) in [("report, second run", "report, first run", 20.0), ("report --since 2h, warm", "report, first run", 20.0), ("alert, next cron run", "alert, first run", 10.0)] {
            let ratio = best[base]!.wall / best[name]!.wall, cpu = best[base]!.cpu / best[name]!.cpu
            print(String(format: "%@ %6.1fx wall, %6.1fx CPU (target >= %.0fx)%@", "\(base) / \(name):".padding(toLength: 48, withPad: " ", startingAt: 0), ratio, cpu, target, ratio >= target ? "  ok" : "  MISSED"))
        }
        print("outputs identical with and without the caches: yes")
    }

    /// Uploads the week through `apitrace collect`, hour by hour, every producer's file of the hour in turn.
    private func upload(into store: String) throws {
        let marker = workDirectory + "/.complete-\(producers)-\(events)"
        if FileManager.default.fileExists(atPath: marker) { return }
        try? FileManager.default.removeItem(atPath: workDirectory)
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let collector = try CollectorChild(store: store)
        defer { collector.stop() }
        let client = try LoopbackHTTPClient(port: collector.port)
        let template = RealisticEvents.make(count: 200_000)
        let start = Self.end - Int64(Self.hours) * 3_600_000
        let perFile = events / (producers * Self.hours)
        var i = 0
        let seconds = try Measure.seconds {
            for hour in 0..<Self.hours {
                for p in 0..<producers {
                    let producer = String(format: "dev%03d", p)
                    // Each device's hour starts at its own offset, as writers rotate when they please.
                    let started = start + Int64(hour) * 3_600_000 + Int64(p) * 7_000
                    var text = Array((TraceFileHeader(producer: producer, app: "Otec", appVersion: "2.1", started: TraceTimestamp(millisecondsSince1970: started)).jsonLine + "\n").utf8)
                    for k in 0..<perFile {
                        var event = template[i % template.count]
                        i += 1
                        event.timestamp = TraceTimestamp(millisecondsSince1970: started + Int64(k) * 3_590_000 / Int64(max(1, perFile)))
                        var out = JSONOutput(reusing: [])
                        event.encode(to: &out)
                        text.append(contentsOf: out.bytes)
                        text.append(0x0A)
                    }
                    let status = try client.post(path: "/v1/traces", token: CollectorChild.token, body: try GzipDeflater.compress(text, level: 5))
                    guard status == 201 else { throw ValidationError("the collector answered \(status) to \(producer) hour \(hour)") }
                }
            }
        }
        print(String(format: "uploaded %d files through apitrace collect in %.1f s", Self.hours * producers, seconds))
        _ = FileManager.default.createFile(atPath: marker, contents: nil)
    }
}
