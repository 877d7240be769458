import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceServerTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Hummingbird
import Testing

/// `apitrace collect` and the uploader as real child processes, killed with SIGKILL mid-upload.
@Suite("apitrace collect and uploads across process kills")
struct CollectCommandTests {
    static let token = "secret-token"

    static func startCollector(_ dir: TemporaryDirectory, port: Int = 0) async throws -> (ChildProcess, Int) {
        let child = try ChildProcess(
            try builtProduct("apitrace").path,
            ["collect", "--listen", "127.0.0.1:\(port)", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN"],
            environment: ["APITRACE_TEST_TOKEN": token, "LOG_LEVEL": "error"])
        let line = try await child.waitForLine("the collector to listen") { $0.contains("listening on http://127.0.0.1:") }
        let port = Int(line.split(separator: ":")[3].split(separator: "/")[0])!
        return (child, port)
    }

    static func startUploader(_ source: TemporaryDirectory, port: Int, pauseMs: Int = 0) throws -> ChildProcess {
        try ChildProcess(try builtProduct("trace-uploader-fixture").path, [source.path, "http://127.0.0.1:\(port)/v1/traces", token, String(pauseMs)])
    }

    /// Every visible file under the collector's folder is whole: each segment its producer's journal
    /// records (or the file, stored alone) is one of the uploaded files, and readers see no damage.
    static func expectOnlyWholeFiles(_ dir: TemporaryDirectory, among sent: Set<String>) {
        for (hash, files) in TraceFiles.stored(under: dir.path) {
            #expect(sent.contains(hash), "\(files) hold bytes that are not one of the uploaded files (half-written?)")
        }
        for relative in TraceFiles.allFiles(under: dir.path) where !relative.split(separator: "/").last!.hasPrefix(".") {
            let read = TraceFileReader(path: dir.file(relative)).forEachEvent { _ in }
            #expect(read.warnings.isEmpty, "\(relative): \(read.warnings)")
        }
    }

    @Test("serves uploads, health and metrics; exits 0 on SIGTERM")
    func servesAndStops() async throws {
        let dir = TemporaryDirectory()
        let (collector, port) = try await Self.startCollector(dir)
        let bytes = TraceFiles.make(producer: "cli", events: TraceFiles.requests(10, seed: 1))
        let stored = try await HTTPClient.upload("http://127.0.0.1:\(port)/v1/traces", bytes)
        #expect(stored.status == 201)
        let refused = try await HTTPClient.upload("http://127.0.0.1:\(port)/v1/traces", bytes, token: "wrong")
        #expect(refused.status == 401)
        let health = try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/health")
        #expect(health.text == "ok\n")
        let metrics = try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/metrics")
        #expect(metrics.text.contains("apitrace_collector_files_accepted_total 1\n"))
        #expect(metrics.text.contains("apitrace_collector_files_rejected_total{reason=\"invalid_token\"} 1\n"))
        try await collector.kill(SIGTERM)
        #expect(collector.process.terminationStatus == 0)
        #expect(!collector.standardError.contains(Self.token))
    }

    /// True when this machine lets an unprivileged process mount a tmpfs in its own namespaces (unshare -rm).
    static func canMountTmpfs() async -> Bool {
        (try? await runOffPool("/usr/bin/unshare", ["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp"]).status) == 0
    }

    @Test("a full disk answers 507, is counted, and leaves no temporary file",
          .enabled("needs unshare -rm to mount a small tmpfs") { await canMountTmpfs() })
    func diskFull() async throws {
        let dir = TemporaryDirectory()
        let apitrace = try builtProduct("apitrace").path
        // The collector runs in its own mount namespace on a 128 KiB tmpfs mounted over `dir`;
        // exec keeps its pid, so /proc/PID/root shows its view of the folder.
        let child = try ChildProcess("/usr/bin/unshare", ["-rm", "sh", "-c",
            "mount -t tmpfs -o size=128k tmpfs \"$0\" && exec \"$1\" collect --listen 127.0.0.1:0 --dir \"$0\" --token-env APITRACE_TEST_TOKEN",
            dir.path, apitrace], environment: ["APITRACE_TEST_TOKEN": Self.token, "LOG_LEVEL": "error"])
        defer { Foundation.kill(child.process.processIdentifier, SIGTERM) }
        let line = try await child.waitForLine("the collector to listen") { $0.contains("listening on http://127.0.0.1:") }
        let port = Int(line.split(separator: ":")[3].split(separator: "/")[0])!
        let url = "http://127.0.0.1:\(port)/v1/traces"
        let small = TraceFiles.make(producer: "small", events: TraceFiles.requests(10, seed: 1))
        #expect(try await HTTPClient.upload(url, small).status == 201)
        // Random durations compress badly: about 600 KiB, more than the tmpfs holds.
        var big = TraceFiles.requests(30_000, seed: 2)
        for i in big.indices { if case .request(var r) = big[i].payload { r.durationMs = Double.random(in: 0..<1e6); big[i].payload = .request(r) } }
        let answer = try await HTTPClient.upload(url, TraceFiles.make(producer: "big", events: big))
        #expect(answer.status == 507)
        #expect(answer.text.contains("disk is full"))
        let metrics = try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/metrics")
        #expect(metrics.text.contains("apitrace_collector_files_rejected_total{reason=\"disk_full\"} 1\n"))
        let view = "/proc/\(child.process.processIdentifier)/root" + dir.path
        #expect(TraceFiles.allFiles(under: view).count == 1, "only the small file; no temporary file left: \(TraceFiles.allFiles(under: view))")
    }

    @Test("refuses to start without a token, saying how to give one")
    func needsToken() async throws {
        let dir = TemporaryDirectory()
        let result = try await runOffPool(try builtProduct("apitrace").path, ["collect", "--dir", dir.path])
        #expect(result.status != 0)
        #expect(String(decoding: result.stderr, as: UTF8.self).contains("--token-file"))
    }

    @Test("refuses a bytes-in-flight bound smaller than the largest body, naming both options")
    func boundsMustFit() async throws {
        let dir = TemporaryDirectory()
        let result = try await runOffPool(try builtProduct("apitrace").path, [
            "collect", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN", "--max-body-bytes", "1000", "--max-bytes-in-flight", "999"])
        #expect(result.status == 64)
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(stderr.contains("--max-bytes-in-flight (999) must be at least --max-body-bytes (1000)"), "\(stderr)")
    }

    @Test("the timeouts take the durations of every other option, a bare number still seconds; a bad one is refused naming the option")
    func timeoutDurations() async throws {
        let dir = TemporaryDirectory()
        let child = try ChildProcess(
            try builtProduct("apitrace").path,
            ["collect", "--listen", "127.0.0.1:0", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN",
             "--header-timeout", "1500ms", "--body-idle-timeout", "20", "--body-timeout", "1m30s"],
            environment: ["APITRACE_TEST_TOKEN": Self.token, "LOG_LEVEL": "error"])
        _ = try await child.waitForLine("the collector to listen") { $0.contains("listening on http://127.0.0.1:") }
        try await child.kill(SIGTERM)
        for (option, value) in [("--header-timeout", "soon"), ("--body-timeout", "0s"), ("--body-idle-timeout", "5 parsecs"), ("--busy-retry-after", "later")] {
            let result = try await runOffPool(try builtProduct("apitrace").path, [
                "collect", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN", option, value])
            #expect(result.status == 64, "\(option) \(value)")
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            #expect(stderr.contains(option), "\(stderr)")
        }
    }

    @Test("collector killed with SIGKILL mid-upload and restarted: only whole files ever visible, each file stored exactly once")
    func collectorKilled() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let paths = TraceFiles.writeFinished(200, to: source.path, eventsPerFile: 3000)
        let sent = Set(paths.map { TraceFiles.sha256Hex([UInt8](FileManager.default.contents(atPath: $0)!)) })
        // A reserved port: after the SIGKILL no parallel test can take it before the restart.
        var (collector, port) = try await Self.startCollector(target, port: try freePort())
        // 30 ms after each delivery: the 200 files take seconds, so the kill lands mid-upload.
        let uploader = try Self.startUploader(source, port: port, pauseMs: 30)
        _ = try await uploader.waitForLine("3 deliveries") { _ in uploader.lines.filter { $0.hasPrefix("delivered") }.count >= 3 }
        try await collector.kill(SIGKILL)
        Self.expectOnlyWholeFiles(target, among: sent)
        #expect(!source.traceFiles.isEmpty, "the collector was killed before the uploader finished")
        (collector, _) = try await Self.startCollector(target, port: port)
        _ = try await uploader.waitForLine("the uploader to finish", seconds: 120) { $0 == "idle" }
        try await uploader.waitForExit()
        try await collector.kill(SIGTERM)
        #expect(source.traceFiles.isEmpty)
        let stored = TraceFiles.stored(under: target.path)
        #expect(Set(stored.keys) == sent)
        #expect(stored.values.allSatisfy { $0.count == 1 })
        let left = TraceFiles.allFiles(under: target.path)
        #expect(!left.contains { $0.split(separator: "/").last!.hasPrefix(".") }, "no temporary file may remain: \(left)")
        #expect(left.count < 200, "the segments of one producer's hour share files: \(left.count)")
    }

    @Test("uploader killed with SIGKILL after the collector stored a file but before it answered: restarted, the file is stored once")
    func uploaderKilled() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let paths = TraceFiles.writeFinished(12, to: source.path)
        let sent = Set(paths.map { TraceFiles.sha256Hex([UInt8](FileManager.default.contents(atPath: $0)!)) })
        let plan = FaultPlan()
        plan.holdAfterPassed = (count: 5, seconds: 60)
        let server = try await RunningCollector.start(
            try TraceCollector(configuration: .init(directory: target.path, tokens: [Self.token]))
        ) { $0.add(middleware: FaultInjection(plan: plan)) }
        defer { Task { await server.stop() } }

        let first = try Self.startUploader(source, port: server.port)
        try await waitUntil("the 5th file stored, its answer held") { plan.passedCount >= 5 }
        try await first.kill(SIGKILL)
        #expect(source.traceFiles.count == 8, "the 5th file is stored but was not deleted by the killed uploader")
        #expect(TraceFiles.stored(under: target.path).count == 5)

        plan.holdAfterPassed = nil
        let second = try Self.startUploader(source, port: server.port)
        _ = try await second.waitForLine("the uploader to finish") { $0 == "idle" }
        try await second.waitForExit()
        #expect(source.traceFiles.isEmpty)
        let stored = TraceFiles.stored(under: target.path)
        #expect(Set(stored.keys) == sent)
        #expect(stored.values.allSatisfy { $0.count == 1 })
        #expect(server.collector.metrics.snapshot.duplicates == 1)
        #expect(server.collector.metrics.snapshot.accepted == 12)
    }
}
