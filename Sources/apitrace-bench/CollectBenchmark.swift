import APITraceFormat
import APITraceUpload
import ArgumentParser
import Foundation

/// `apitrace-bench collect`: uploads/s and MB/s an `apitrace collect` child sustains on loopback,
/// fed by several real ``TraceUploader``s at once, and the collector's peak memory.
struct CollectBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collect",
        abstract: "Uploads/s, MB/s and peak memory of `apitrace collect` on loopback with concurrent uploaders."
    )

    @Option(help: "Concurrent uploaders (one folder and one connection each).")
    var clients = 8

    @Option(help: "Files per uploader.")
    var filesPerClient = 100

    @Option(help: "Events per file (about 40 bytes each once compressed).")
    var eventsPerFile = 2_000

    @Option(help: "Uploads sent at once, each on its own connection, in the burst phase (0: skip it).")
    var burst = 200

    @Option(help: "Events per file in the burst phase (20,000: about 420 KiB gzip, 4 MiB plain).")
    var burstEvents = 20_000

    @Option(help: "Rounds of the ingest-counting comparison (raw clients against a fresh collector with counting on, then off; 0: skip it).")
    var ingestRounds = 2

    @Option(help: "Folder for the generated files and the collector's store (emptied first).")
    var workDirectory = NSTemporaryDirectory() + "apitrace-bench-collect"

    func run() throws {
        try? FileManager.default.removeItem(atPath: workDirectory)
        let store = workDirectory + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)

        // Distinct files (the collector stores identical content once): same events, a different producer each.
        let events = RealisticEvents.make(count: eventsPerFile)
        var body = JSONOutput()
        for event in events { event.encode(to: &body); body.bytes.append(0x0A) }
        var totalBytes = 0, totalPlain = 0
        let generation = try Measure.seconds {
            for client in 0..<clients {
                let folder = workDirectory + "/client\(client)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for i in 0..<filesPerClient {
                    let producer = "c\(client)f\(i)"
                    var out = JSONOutput()
                    TraceFileHeader(producer: producer, started: events[0].timestamp).encode(to: &out)
                    out.bytes.append(0x0A)
                    out.bytes += body.bytes
                    let gz = try GzipDeflater.compress(out.bytes, level: 5)
                    totalBytes += gz.count
                    totalPlain += out.bytes.count
                    let name = TraceFileIdentity(started: events[0].timestamp, producer: producer, sequence: i + 1).fileName
                    // Read-only, as the writer leaves a finished file (a writable one would be checked for a cut first).
                    _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(gz), attributes: [.posixPermissions: 0o400])
                }
            }
        }
        let files = clients * filesPerClient
        print("collect: \(files) files (\(clients) uploaders x \(filesPerClient)), \(eventsPerFile) events each, "
              + "\(Measure.format(Double(totalBytes) / Double(files) / 1024)) KiB gzip / \(Measure.format(Double(totalPlain) / Double(files) / 1024)) KiB plain per file "
              + "(generated in \(Measure.format(generation)) s)")

        let collector = try CollectorChild(store: store)
        defer { collector.stop() }
        let idle = collector.memory()
        let token = CollectorChild.token
        let uploaders = (0..<clients).map { client in
            TraceUploader(configuration: .init(
                directory: workDirectory + "/client\(client)", endpoint: URL(string: "http://127.0.0.1:\(collector.port)/v1/traces")!,
                token: token, minimumFileAge: .zero, scanInterval: .milliseconds(20), retry: RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(200)),
                diagnostics: { FileHandle.standardError.write(Data("uploader: \($0)\n".utf8)) }))
        }
        let cpuBefore = collector.cpuSeconds()
        let seconds = Measure.seconds {
            for uploader in uploaders { uploader.start() }
            while uploaders.contains(where: { $0.statistics.delivered < filesPerClient }) { usleep(2_000) }
        }
        let peak = collector.memory()
        let cpu = collector.cpuSeconds() - cpuBefore
        let delivered = uploaders.reduce(0) { $0 + $1.statistics.delivered }
        let retries = uploaders.reduce(0) { $0 + $1.statistics.retries }
        let stored = (FileManager.default.enumerator(atPath: store)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".jsonl.gz") }.count
        guard delivered == files, stored == files else {
            throw BenchError("delivered \(delivered), stored \(stored), expected \(files)")
        }
        print("  \(Measure.format(Double(files) / seconds, 0)) uploads/s, \(Measure.format(Double(totalBytes) / seconds / 1e6)) MB/s gzip "
              + "(\(Measure.format(Double(totalPlain) / seconds / 1e6)) MB/s decompressed and checked), "
              + "\(Measure.format(seconds, 2)) s for \(files) uploads, \(retries) retries")
        print("  collector CPU: \(Measure.format(cpu, 2)) s (\(Measure.format(cpu * 1000 / Double(files), 2)) ms per upload, "
              + "\(Measure.format(cpu / seconds * 100, 0)) % of one core; the rest is the uploaders and fsync waits)")
        print("  collector memory: VmRSS idle \(idle.rss / 1024) MiB, VmHWM after load \(peak.hwm / 1024) MiB")
        let raw = try rawClients(collector: collector, body: body.bytes, started: events[0].timestamp, producerPrefix: "raw")
        print("raw keep-alive socket clients (\(clients) connections), \(raw.count) more distinct files:")
        print("  \(raw.summary)")
        collector.stop()
        if ingestRounds > 0 {
            try ingestComparison(body: body.bytes, started: events[0].timestamp)
        }
        if burst > 0 {
            // The events once, compressed once: each file is a header member followed by this member (gzip allows several).
            let burstBody = RealisticEvents.make(count: burstEvents)
            var plain = JSONOutput()
            for event in burstBody { event.encode(to: &plain); plain.bytes.append(0x0A) }
            let member = try GzipDeflater.compress(plain.bytes, level: 5)
            let started = burstBody[0].timestamp
            print("burst files: \(burstEvents) events, \(Measure.format(Double(member.count) / 1024)) KiB gzip / \(Measure.format(Double(plain.bytes.count) / 1024)) KiB plain each")
            // Each burst gets a fresh collector, so its VmHWM is the burst's peak alone.
            try burstPhase(member: member, started: started, label: "no effective bounds (1000 uploads, 4 GiB)",
                           arguments: ["--max-concurrent-uploads", "1000", "--max-bytes-in-flight", String(4 << 30)])
            try burstPhase(member: member, started: started, label: "default bounds (64 uploads, 256 MiB)", arguments: [])
            try burstPhase(member: member, started: started, label: "default bounds, ingest counting off", arguments: ["--no-ingest-metrics"])
            try burstPhase(member: member, started: started, label: "bounds of 16 uploads, 8 MiB",
                           arguments: ["--max-concurrent-uploads", "16", "--max-bytes-in-flight", String(8 << 20), "--max-body-bytes", String(8 << 20)])
        }
    }

    /// `burst` uploads at once, each on a connection of its own, as a fleet's devices coming online
    /// together: a 503 is retried after its Retry-After (1 s here) on a new connection.
    func burstPhase(member: [UInt8], started: TraceTimestamp, label: String, arguments: [String]) throws {
        let store = workDirectory + "/burst-store-\(abs(label.hashValue))"
        try? FileManager.default.removeItem(atPath: store)
        let collector = try CollectorChild(store: store, extraArguments: ["--busy-retry-after", "1"] + arguments)
        defer { collector.stop() }
        let idle = collector.memory()
        let files: [[UInt8]] = try (0..<burst).map { i in
            var out = JSONOutput()
            TraceFileHeader(producer: "burst\(i)", started: started).encode(to: &out)
            out.bytes.append(0x0A)
            return try GzipDeflater.compress(out.bytes, level: 5) + member
        }
        let failures = Failures()
        let busy = Failures()
        let port = collector.port
        let group = DispatchGroup()
        let cpuBefore = collector.cpuSeconds()
        let seconds = Measure.seconds {
            for file in files {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    for _ in 0..<100 {
                        do {
                            let status = try LoopbackHTTPClient(port: port).post(path: "/v1/traces", token: CollectorChild.token, body: file)
                            if status == 201 { return }
                            if status != 503 { failures.add("HTTP \(status)"); return }
                            busy.add("503")
                        } catch {
                            // The collector closes a busy connection, sometimes before the client has sent its whole body.
                            busy.add("closed")
                        }
                        usleep(UInt32.random(in: 1_000_000...1_200_000))
                    }
                    failures.add("still refused after 100 attempts")
                }
            }
            group.wait()
        }
        let cpu = collector.cpuSeconds() - cpuBefore
        let peak = collector.memory()
        if let first = failures.first { throw BenchError("burst: \(first)") }
        let stored = (FileManager.default.enumerator(atPath: store)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".jsonl.gz") }.count
        guard stored == burst else { throw BenchError("burst: stored \(stored) of \(burst)") }
        print("burst of \(burst) uploads at once, \(label):")
        print("  \(Measure.format(Double(burst) / seconds, 0)) uploads/s (\(Measure.format(seconds, 2)) s for all, \(busy.count) answered busy and retried after 1 s), "
              + "collector CPU \(Measure.format(cpu * 1000 / Double(burst), 2)) ms per upload, "
              + "VmRSS idle \(idle.rss / 1024) MiB, VmHWM \(peak.hwm / 1024) MiB")
    }

    /// The raw clients' load against a fresh collector counting at ingest and keeping its counters
    /// in the store (`--instance-id`), one counting in memory only, and one not counting
    /// (`--no-ingest-metrics`), alternated `ingestRounds` times in the same run, each round starting
    /// with the next mode; checks that the counting collectors counted every event once.
    func ingestComparison(body: [UInt8], started: TraceTimestamp) throws {
        print("ingest counting (\(clients) raw keep-alive connections, \(clients * filesPerClient) files of \(eventsPerFile) events per round, a fresh collector each):")
        let modes: [(label: String, arguments: [String], counting: Bool)] = [
            ("on, durable (--instance-id)", ["--instance-id", "bench"], true),
            ("on, in memory", [], true),
            ("off (--no-ingest-metrics)", ["--no-ingest-metrics"], false),
        ]
        var results: [Int: [RawResult]] = [:]
        for round in 0..<ingestRounds {
            // Each round starts with the next mode, so no mode always runs first or last in a round
            // (the store's file system and the page cache are in another state for each).
            for k in 0..<modes.count {
                let m = (round + k) % modes.count, mode = modes[m]
                let store = workDirectory + "/ingest-\(round)-\(m)"
                let collector = try CollectorChild(store: store, extraArguments: mode.arguments)
                defer { collector.stop() }
                let result = try rawClients(collector: collector, body: body, started: started, producerPrefix: "ingest\(round)")
                if mode.counting {
                    let metrics = try LoopbackHTTPClient(port: collector.port).get(path: "/metrics")
                    let line = metrics.split(separator: "\n").first { $0.hasPrefix("apitrace_collector_events_counted_total ") }
                    let counted = line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
                    guard counted == result.count * eventsPerFile else {
                        throw BenchError("the collector counted \(counted) events, expected \(result.count * eventsPerFile)")
                    }
                }
                results[m, default: []].append(result)
                print("  round \(round + 1), counting \(mode.label): \(result.summary)")
            }
        }
        // The collector's CPU per upload moved by a fifth between rounds of one mode on the 2-core
        // virtual machine here: the median of several rounds is the figure to quote.
        let off = (results[modes.count - 1] ?? []).map(\.cpuMsPerUpload)
        for (m, mode) in modes.enumerated() {
            let runs = results[m] ?? []
            let rate = runs.map(\.uploadsPerSecond).sorted(), cpu = runs.map(\.cpuMsPerUpload).sorted()
            // Each round's ratio against the off collector of the same round.
            let ratios = zip(runs.map(\.cpuMsPerUpload), off).map { $0 / $1 }.sorted()
            print("  counting \(mode.label): \(Measure.format(rate.first ?? 0, 0)) to \(Measure.format(rate.last ?? 0, 0)) uploads/s, "
                  + "collector CPU \(Measure.format(cpu.first ?? 0, 2)) to \(Measure.format(cpu.last ?? 0, 2)) ms per upload, "
                  + "\(Measure.format(ratios.first ?? 0, 2))x to \(Measure.format(ratios.last ?? 0, 2))x off, "
                  + "median \(Measure.format(Measure.median(ratios), 2))x (target <= 1.3x)")
        }
    }

    /// What one raw-client phase measured.
    struct RawResult {
        var count: Int
        var seconds: Double
        var bytes: Int
        var cpuSeconds: Double
        var cpuShare: Double
        var hwmKiB: Int
        /// Time from sending an upload to its answer, sorted.
        var latencies: [Double]

        var uploadsPerSecond: Double { Double(count) / seconds }
        var cpuMsPerUpload: Double { cpuSeconds * 1000 / Double(count) }
        func latency(_ q: Double) -> Double { latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(q * Double(latencies.count)))] }

        var summary: String {
            "\(Measure.format(uploadsPerSecond, 0)) uploads/s, \(Measure.format(Double(bytes) / seconds / 1e6)) MB/s gzip, "
                + "collector CPU \(Measure.format(cpuMsPerUpload, 2)) ms per upload (\(Measure.format(cpuShare * 100, 0)) % of one core), "
                + "answer in \(Measure.format(latency(0.5) * 1000, 1)) ms median / \(Measure.format(latency(0.95) * 1000, 1)) ms p95, "
                + "VmHWM \(hwmKiB / 1024) MiB"
        }
    }

    /// The same load from minimal keep-alive socket clients: what the collector itself sustains.
    func rawClients(collector: CollectorChild, body: [UInt8], started: TraceTimestamp, producerPrefix: String) throws -> RawResult {
        let files: [[[UInt8]]] = try (0..<clients).map { client in
            try (0..<filesPerClient).map { i in
                var out = JSONOutput()
                TraceFileHeader(producer: "\(producerPrefix)\(client)x\(i)", started: started).encode(to: &out)
                out.bytes.append(0x0A)
                out.bytes += body
                return try GzipDeflater.compress(out.bytes, level: 5)
            }
        }
        let bytes = files.joined().reduce(0) { $0 + $1.count }
        let count = clients * filesPerClient
        let failures = Failures()
        let latencies = Latencies()
        let cpuBefore = collector.cpuSeconds()
        let port = collector.port
        let seconds = Measure.seconds {
            DispatchQueue.concurrentPerform(iterations: clients) { client in
                do {
                    let connection = try LoopbackHTTPClient(port: port)
                    for file in files[client] {
                        let start = DispatchTime.now().uptimeNanoseconds
                        let status = try connection.post(path: "/v1/traces", token: CollectorChild.token, body: file)
                        latencies.add(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                        if status != 201 { failures.add("HTTP \(status)") }
                    }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        let cpu = collector.cpuSeconds() - cpuBefore
        let peak = collector.memory()
        if let first = failures.first { throw BenchError("raw client: \(first)") }
        return RawResult(count: count, seconds: seconds, bytes: bytes, cpuSeconds: cpu, cpuShare: cpu / seconds, hwmKiB: peak.hwm, latencies: latencies.sorted)
    }
}

/// Durations gathered from the raw client threads, in seconds.
final class Latencies: Sendable {
    private let values = Locked([Double]())
    func add(_ value: Double) { values.withLock { $0.append(value) } }
    var sorted: [Double] { values.withLock { $0.sorted() } }
}

/// Errors gathered from the raw client threads.
final class Failures: Sendable {
    private let messages = Locked([String]())
    func add(_ message: String) { messages.withLock { $0.append(message) } }
    var first: String? { messages.withLock { $0.first } }
    var count: Int { messages.withLock { $0.count } }
}

/// `apitrace collect` as a child process, found next to this benchmark's executable.
final class CollectorChild {
    static let token = "bench-token"
    let process = Process()
    let port: Int

    init(store: String, extraArguments: [String] = []) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("apitrace")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchError("\(executable.path) is missing: build it first (swift build -c release --product apitrace)")
        }
        process.executableURL = executable
        process.arguments = ["collect", "--listen", "127.0.0.1:0", "--dir", store, "--token-env", "APITRACE_BENCH_TOKEN"] + extraArguments
        var environment = ProcessInfo.processInfo.environment
        environment["APITRACE_BENCH_TOKEN"] = Self.token
        environment["LOG_LEVEL"] = "error"
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { throw BenchError("apitrace collect exited before listening") }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: "127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            throw BenchError("cannot read the port from: \(text)")
        }
        self.port = port
    }

    /// VmRSS and VmHWM (peak resident) of the collector, in KiB, from /proc.
    func memory() -> (rss: Int, hwm: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// User + system CPU seconds the collector has used, from /proc/PID/stat.
    func cpuSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return .nan }
        // Fields after "(comm)": state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
