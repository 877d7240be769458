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
        let cases = [
            ("issue's minimal rule (burn rate, 6 h lookback), first run (no count cache)", minimal, false),
            ("issue's minimal rule, next cron run (count cache of finished files)", minimal, true),
            ("+ spike vs trailing day (24 h lookback), no cache", withSpike, false),
            ("+ spike vs trailing day, next cron run (count cache)", withSpike, true),
            ("errors + latency + new_failures (7 d baseline), no cache", newKinds, false),
            ("errors + latency + new_failures, next cron run (count cache: counts and new_failures groups of finished files)", newKinds, true),
        ]
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
            print("\(label): median \(Measure.format(times[times.count / 2] * 1000, 0)) ms (min \(Measure.format(times[0] * 1000, 0)) ms), opened \(outcome.filesOpened) + \(outcome.filesFromCache) cached of \(outcome.filesFound) files, scanned \(outcome.linesScanned) lines, \(outcome.transitions.values.map(\.rawValue).sorted().joined(separator: ","))")
        }

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
