import APITraceAlerting
import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench alert`: one cron evaluation over a day of traces, as `apitrace alert` runs it every minute.
struct AlertBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "Time one alert evaluation over 24 h of traces (~2M events in many files) with --now at the end."
    )

    @Option(help: "Events in the day of traces.")
    var events = 2_000_000

    @Option(help: "Producers writing at once (each rotates its file every 30 minutes).")
    var producers = 8

    @Option(help: "Timed repetitions (the median is printed).")
    var repetitions = 5

    @Option(help: "The apitrace binary whose memory is measured over 300,000 distinct routes (default: the one beside apitrace-bench).")
    var apitrace: String?

    @Option(help: "Folder for the generated traces (kept between runs).")
    var workDirectory = NSTemporaryDirectory() + "apitrace-bench-alert"

    func run() throws {
        let traces = workDirectory + "/traces-\(events)-\(producers)"
        let end = try generate(into: traces)
        let now = TraceTimestamp(millisecondsSince1970: end)
        print("traces: \(events) events over 24 h in \(TraceFileDiscovery.find([traces]).files.count) files (\(traces))")

        let minimal = try AlertRules.parse("rules:\n  - name: api-errors\n    slo: 0.99\n")
        let withSpike = try AlertRules.parse("""
            rules:
              - name: api-errors
                slo: 0.99
              - name: apps-spike
                scope: {route: "/apps/{id}"}
                spike: {window: 30m, baseline: trailing_day}
            """)
        let newKinds = try AlertRules.parse("""
            rules:
              - name: api-errors
                slo: 0.99
              - name: api-latency
                latency_ms: 2000
                slo: 0.95
              - name: new-failures
                new_failures: {baseline: 7d, window: 1h}
            """)
        let grouped = try AlertRules.parse("rules:\n  - name: api-routes\n    slo: 0.99\n    group_by: [route]\n")
        let cases = [
            ("issue's minimal rule (burn rate, 6 h lookback), first run (no count cache)", minimal, false),
            ("the same rule with group_by: [route], first run (no count cache)", grouped, false),
            ("issue's minimal rule, next cron run (count cache of finished files)", minimal, true),
            ("the same rule with group_by: [route], next cron run (count cache keyed by group)", grouped, true),
            ("+ spike vs trailing day (24 h lookback), no cache", withSpike, false),
            ("+ spike vs trailing day, next cron run (count cache)", withSpike, true),
            ("errors + latency + new_failures (7 d baseline), no cache", newKinds, false),
            ("errors + latency + new_failures, next cron run (count cache: counts and new_failures groups of finished files)", newKinds, true),
        ]
        var medians: [String: Double] = [:]
        for (label, rules, warm) in cases {
            var times: [Double] = []
            var outcome = AlertRunner.Outcome()
            let state = workDirectory + "/state-\(UUID().uuidString).json"
            if warm {
                var options = AlertRunner.Options(traceDirectory: traces, statePath: state)
                options.now = now
                let runner = AlertRunner(rules: rules, options: options)
                _ = Self.blocking { await runner.run() }
            }
            for _ in 0..<repetitions {
                if !warm { try? FileManager.default.removeItem(atPath: state + ".counts") }
                var options = AlertRunner.Options(traceDirectory: traces, statePath: state)
                options.now = now
                let clock = ContinuousClock()
                let start = clock.now
                let runner = AlertRunner(rules: rules, options: options)
                outcome = Self.blocking { await runner.run() }
                let d = start.duration(to: clock.now)
                times.append(Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
            }
            for suffix in ["", ".lock", ".counts"] { try? FileManager.default.removeItem(atPath: state + suffix) }
            times.sort()
            medians[label] = times[times.count / 2]
            print("\(label): median \(Measure.format(times[times.count / 2] * 1000, 0)) ms (min \(Measure.format(times[0] * 1000, 0)) ms), opened \(outcome.filesOpened) + \(outcome.filesFromCache) cached of \(outcome.filesFound) files, scanned \(outcome.linesScanned) lines, \(outcome.transitions.values.map(\.rawValue).sorted().joined(separator: ","))")
        }

        let ratios = [(cases[1].0, cases[0].0), (cases[3].0, cases[2].0)].map { Measure.format(medians[$0.0]! / medians[$0.1]!, 2) + "x" }
        print("group_by: [route] against the same rule ungrouped (target at most 1.5x): first run \(ratios[0]), next cron run \(ratios[1])")
        try distinctRoutes()

        // The same files read through the typed decoder, to show why counting scans raw lines instead.
        let rule = minimal.rules[0]
        let selected = TraceFileSelection.select(TraceFileDiscovery.find([traces]).files, overlapping: rule.countedRanges(from: end, to: end))
        var decoded = 0
        let typed = Measure.seconds {
            decoded = ParallelTraceReader.map(selected) { reader in reader.forEachEvent { _ in }.events }.reduce(0, +)
        }
        print("typed decode (TraceFileReader.forEachEvent) of the same \(selected.count) files: \(Measure.format(typed * 1000, 0)) ms for \(decoded) events")

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apitrace").path
        if FileManager.default.isExecutableFile(atPath: binary) {
            let rulesPath = workDirectory + "/minimal-rules.yaml"
            try "rules:\n  - name: api-errors\n    slo: 0.99\n".write(toFile: rulesPath, atomically: true, encoding: .utf8)
            var times: [Double] = []
            let state = workDirectory + "/cli-state.json"
            for suffix in ["", ".lock", ".counts"] { try? FileManager.default.removeItem(atPath: state + suffix) }
            for _ in 0...repetitions {
                times.append(try Measure.shell("'\(binary)' alert '\(traces)' --rules '\(rulesPath)' --state '\(state)' --now \(now.rfc3339) > /dev/null"))
            }
            let first = times.removeFirst()
            times.sort()
            print("whole `apitrace alert` process (start, evaluate, write state): first run \(Measure.format(first * 1000, 0)) ms, next runs median \(Measure.format(times[times.count / 2] * 1000, 0)) ms")
        }
    }

    /// Memory of `apitrace alert` (a child process, peak resident set) over 6 h of traces whose
    /// requests carry 300,000 distinct routes (ids left in the paths), grouped by route under the
    /// default cap and ungrouped: the groups beyond `max_groups` are counted as `(other)`, so the
    /// grouped run's memory stays near the ungrouped one's.
    private func distinctRoutes() throws {
        let binary = apitrace ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("apitrace").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return print("distinct routes: build apitrace beside apitrace-bench to measure") }
        let routes = 300_000, count = 600_000
        let directory = workDirectory + "/distinct-routes-\(routes)"
        let end: Int64 = 1_795_348_800_000, start = end - 6 * 3_600_000
        if !FileManager.default.fileExists(atPath: directory + "/.complete") {
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var text: [UInt8] = [], sequence = 0, slot: Int64 = -1, name = ""
            func flush() throws {
                if !name.isEmpty { try Data(try GzipDeflater.compress(text, level: 1)).write(to: URL(fileURLWithPath: directory + "/" + name)) }
            }
            for i in 0..<count {
                let ts = start + Int64(i) * (end - start) / Int64(count)
                if (ts - start) / 1_800_000 != slot {
                    try flush()
                    slot = (ts - start) / 1_800_000
                    sequence += 1
                    let started = TraceTimestamp(millisecondsSince1970: ts)
                    name = TraceFileIdentity(started: started, producer: "distinct", sequence: sequence).fileName
                    text = Array((TraceFileHeader(producer: "distinct", app: "Otec", appVersion: "2.1", started: started).jsonLine + "\n").utf8)
                }
                let status = i % 50 == 0 ? 503 : 200
                text += Array(#"{"type":"request","ts":"\#(TraceTimestamp(millisecondsSince1970: ts).rfc3339)","method":"GET","route":"/items/\#(i % routes)","status":\#(status),"duration_ms":40}"#.utf8)
                text.append(0x0A)
            }
            try flush()
            _ = FileManager.default.createFile(atPath: directory + "/.complete", contents: nil)
        }
        for (label, rule) in [("ungrouped", ""), ("group_by: [route] (max_groups 100)", "\n    group_by: [route]"), ("group_by: [route], max_groups: 1000", "\n    group_by: [route]\n    max_groups: 1000")] {
            let rulesPath = workDirectory + "/distinct-rules.yaml", state = workDirectory + "/distinct-state.json"
            try "rules:\n  - name: api\n    slo: 0.99\(rule)\n".write(toFile: rulesPath, atomically: true, encoding: .utf8)
            for suffix in ["", ".lock", ".counts"] { try? FileManager.default.removeItem(atPath: state + suffix) }
            // Peak resident set of the child alone, read by Python's getrusage (RUSAGE_CHILDREN of a fresh parent).
            let script = "import resource,subprocess,sys,time; t=time.time(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.time()-t)"
            for run in ["first run", "next run"] {
                let process = Process(), pipe = Pipe()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", "-c", script, binary, "alert", directory, "--rules", rulesPath, "--state", state, "--now", TraceTimestamp(millisecondsSince1970: end).rfc3339]
                process.standardOutput = pipe
                try process.run()
                process.waitUntilExit()
                let fields = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
                let kb = Double(fields.first ?? "0") ?? 0, seconds = Double(fields.dropFirst().first?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "0") ?? 0
                print("\(routes) distinct routes, \(count) events over 6 h, \(label), \(run) of \(binary): peak RSS \(Measure.format(kb / 1024, 0)) MB, \(Measure.format(seconds * 1000, 0)) ms")
            }
        }
    }

    /// Runs async code from this synchronous command (the benchmark root is not async).
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: T?
        Task { result = await body(); done.signal() }
        done.wait()
        return result!
    }

    /// Writes a day of realistic events (ending at the returned instant) into 30-minute files per producer, once.
    private func generate(into directory: String) throws -> Int64 {
        let end: Int64 = 1_795_348_800_000  // 2026-11-22T12:00:00Z
        let start = end - 86_400_000
        let marker = directory + "/.complete"
        if FileManager.default.fileExists(atPath: marker) { return end }
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let template = RealisticEvents.make(count: min(events, 200_000))
        let fileSpan: Int64 = 1_800_000
        var perFile: [String: [UInt8]] = [:]
        func flush(_ key: String) throws {
            guard let text = perFile.removeValue(forKey: key) else { return }
            try Data(try GzipDeflater.compress(text, level: 5)).write(to: URL(fileURLWithPath: directory + "/" + key))
        }
        var sequences = [Int](repeating: 0, count: producers)
        var currentFile = [String?](repeating: nil, count: producers)
        var currentSlot = [Int64](repeating: -1, count: producers)
        for i in 0..<events {
            let producer = i % producers
            let ts = start + Int64(i) * 86_400_000 / Int64(events)
            let slot = (ts - start) / fileSpan
            if slot != currentSlot[producer] {
                if let file = currentFile[producer] { try flush(file) }
                sequences[producer] += 1
                currentSlot[producer] = slot
                let started = TraceTimestamp(millisecondsSince1970: ts)
                let name = TraceFileIdentity(started: started, producer: String(format: "bench%03d", producer), sequence: sequences[producer]).fileName
                currentFile[producer] = name
                let header = TraceFileHeader(producer: String(format: "bench%03d", producer), app: "Otec", appVersion: "2.1", started: started)
                perFile[name] = Array((header.jsonLine + "\n").utf8)
            }
            var event = template[i % template.count]
            event.timestamp = TraceTimestamp(millisecondsSince1970: ts)
            var out = JSONOutput(reusing: [])
            event.encode(to: &out)
            out.bytes.append(0x0A)
            perFile[currentFile[producer]!]!.append(contentsOf: out.bytes)
        }
        for file in currentFile.compactMap({ $0 }) { try flush(file) }
        _ = FileManager.default.createFile(atPath: marker, contents: nil)
        return end
    }
}
