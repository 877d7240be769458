import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Local files a hostile user of a shared folder can plant, met by the built `apitrace` run as a
/// real child process with a deadline: FIFOs, sockets and links to devices named like trace files
/// or report cache packs must be skipped with a warning naming them (never read, never waited
/// on), a file name that is not UTF-8 is read, and a link planted at an `--output` or `--state`
/// name is never written through.
@Suite("Hostile local files, through every command", .serialized)
struct HostileLocalFileTests {
    /// Long enough for a loaded 2-core machine; a command blocked on a FIFO never ends.
    static let deadline: Double = 120

    /// Runs `apitrace` with a deadline; a child still running at the deadline is killed and recorded.
    static func apitraceWithin(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let child = try ChildProcess(try builtProduct("apitrace").path, arguments,
                                     environment: ["APITRACE_CACHE_DIR": testReportCacheDirectory].merging(environment) { $1 })
        do {
            return try await child.finished(seconds: deadline)
        } catch {
            try? await child.kill()
            Issue.record("apitrace \(arguments.joined(separator: " ")) did not finish within \(deadline) s")
            return (-1, "", child.standardError)
        }
    }

    /// A folder with one good trace file and, named like trace files, a FIFO, a socket, links to
    /// `/dev/zero` and `/dev/urandom`, and a file whose name is not UTF-8 holding more events.
    struct Folder {
        let dir = TemporaryDirectory()
        var traces: String { dir.file("traces") }
        let hostile = ["20261122T100000Z-fifo-0001.jsonl.gz", "20261122T100000Z-zero-0001.jsonl.gz",
                       "20261122T100000Z-random-0001.jsonl", "20261122T100000Z-socket-0001.jsonl.gz"]
        let goodEvents = TraceFixture.events([.init(from: -90, to: 0, perMinute: 10, failureRatio: 0.1)])  // two files, the first finished: cacheable
        let latinEvents = TraceFiles.requests(9, seed: 5, start: TraceFixture.now)
        /// The non-UTF-8 file's name as it is shown in messages.
        let latinShown = "20261122T115500Z-caf\\xE9-0001.jsonl.gz"

        init() throws {
            try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
            _ = try TraceFixture.write(goodEvents, to: traces)
            #expect(mkfifo(traces + "/" + hostile[0], 0o644) == 0)
            try FileManager.default.createSymbolicLink(atPath: traces + "/" + hostile[1], withDestinationPath: "/dev/zero")
            try FileManager.default.createSymbolicLink(atPath: traces + "/" + hostile[2], withDestinationPath: "/dev/urandom")
            let bound = try run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", traces + "/" + hostile[3]])
            #expect(bound.status == 0)
            let bytes = TraceFiles.make(producer: "latin", started: TraceFixture.now, events: latinEvents)
            let name = Array((traces + "/20261122T115500Z-caf").utf8) + [0xE9] + Array("-0001.jsonl.gz".utf8) + [0]
            let fd = name.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) } }
            try #require(fd >= 0)
            #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
            close(fd)
        }

        func expectNamed(_ stderr: String, _ command: String) {
            for name in hostile {
                #expect(stderr.contains(traces + "/" + name), "\(command) does not name \(name): \(stderr)")
            }
        }
    }

    @Test("report, cat, export and alert finish, name every FIFO, socket and device link, and count the good files' events")
    func everyCommandSkipsWhatIsNotARegularFile() async throws {
        let folder = try Folder()
        let total = folder.goodEvents.count + folder.latinEvents.count

        let cat = try await Self.apitraceWithin(["cat", folder.traces, "--no-headers"])
        #expect(cat.status == 1, "warnings, and events read: \(cat.stderr)")
        folder.expectNamed(cat.stderr, "cat")
        #expect(cat.stdout.split(separator: "\n").count == total)
        #expect(!cat.stderr.contains(folder.latinShown), "the non-UTF-8 file was not read: \(cat.stderr)")

        let report = try await Self.apitraceWithin(["report", folder.traces, "--format", "json"])
        #expect(report.status == 0, "\(report.stderr)")
        folder.expectNamed(report.stderr, "report")
        let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let totals = json?["totals"] as? [String: Any]
        #expect(totals?["events"] as? Int == total, "\(report.stdout.prefix(600))")

        let export = try await Self.apitraceWithin(["export", folder.traces, "--format", "prometheus"])
        #expect(export.status == 0, "\(export.stderr)")
        folder.expectNamed(export.stderr, "export")
        #expect(export.stdout.contains("apitrace_http_client_requests_total"))

        let rules = try TraceFixture.rules("rules:\n  - name: api\n    slo: 0.99\n    notify: [hook]\nnotifiers:\n  hook: {type: webhook, url: \"http://127.0.0.1:9/unused\"}\n", in: folder.dir)
        for extra in [["--dry-run"], []] {
            let alert = try await Self.apitraceWithin(["alert", folder.traces, "--rules", rules, "--state", folder.dir.file("state.json"),
                                                       "--now", TraceFixture.now.rfc3339] + extra)
            #expect(alert.status < 128, "\(alert.stderr)")
            folder.expectNamed(alert.stderr, "alert \(extra)")
        }
    }

    @Test("a file whose name is not UTF-8, named on the command line, is read")
    func nonUTF8Argument() async throws {
        let folder = try Folder()
        // Foundation's Process passes arguments as UTF-8 strings; bash passes the raw byte 0xE9.
        let run = try await runChild("/bin/bash", ["-c", #""$0" cat --no-headers "$1"$'\xe9'"$2""#, try builtProduct("apitrace").path,
                                                   folder.traces + "/20261122T115500Z-caf", "-0001.jsonl.gz"],
                                     environment: ["APITRACE_CACHE_DIR": testReportCacheDirectory])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").count == folder.latinEvents.count, "\(run.stdout)\(run.stderr)")
    }

    @Test("a FIFO or a device link named explicitly is refused, not read", arguments: [0, 1, 2])
    func explicitPaths(index: Int) async throws {
        let folder = try Folder()
        let path = folder.traces + "/" + folder.hostile[index]
        let cat = try await Self.apitraceWithin(["cat", path])
        #expect(cat.status != 0 && cat.status < 128)
        #expect(cat.stderr.contains(path), "\(cat.stderr)")
    }

    @Test("a FIFO or a device link at the report cache's file, its lock or an old pack's name is never read; the report finishes")
    func hostileCacheFiles() async throws {
        let folder = try Folder()
        let cache = folder.dir.file("cache")
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        #expect(mkfifo(cache + "/report.cache", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: cache + "/report.cache.lock", withDestinationPath: "/dev/zero")
        #expect(mkfifo(cache + "/0000000000000000-1-1.pack", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: cache + "/ffffffffffffffff-1-1.pack", withDestinationPath: "/dev/urandom")
        for round in 1...2 {
            let report = try await Self.apitraceWithin(["report", folder.traces, "--format", "json"], environment: ["APITRACE_CACHE_DIR": cache])
            #expect(report.status == 0, "round \(round): \(report.stderr)")
            // The FIFO is named once, then replaced by the store the first run wrote.
            #expect(report.stderr.contains(cache + "/report.cache") == (round == 1), "round \(round): \(report.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
            #expect((json?["totals"] as? [String: Any])?["events"] as? Int == folder.goodEvents.count + folder.latinEvents.count)
        }
        // The old packs' names are gone, their targets untouched; the link at the lock is still a link.
        #expect(!FileManager.default.fileExists(atPath: cache + "/0000000000000000-1-1.pack"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: cache + "/ffffffffffffffff-1-1.pack")) == nil)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: cache + "/report.cache.lock")) == "/dev/zero")
    }

    @Test("links planted at --output and --state names are replaced, never written through")
    func linksAtOutputs() async throws {
        let folder = try Folder()
        let dir = folder.dir
        let precious = Data("precious\n".utf8)
        try precious.write(to: URL(fileURLWithPath: dir.file("victim")))
        for name in ["metrics.prom", "rules.prom.yaml", "report.txt"] {
            try FileManager.default.createSymbolicLink(atPath: dir.file(name), withDestinationPath: dir.file("victim"))
        }
        let export = try await Self.apitraceWithin(["export", folder.traces, "--format", "prometheus", "--output", dir.file("metrics.prom"),
                                                    "--state", dir.file("export-state.json")])
        #expect(export.status == 0, "\(export.stderr)")
        let rules = try TraceFixture.rules("rules:\n  - name: api\n    slo: 0.99\n", in: dir)
        let translated = try await Self.apitraceWithin(["rules", "--format", "prometheus", "--rules", rules, "--output", dir.file("rules.prom.yaml")])
        #expect(translated.status == 0, "\(translated.stderr)")
        let report = try await Self.apitraceWithin(["report", folder.traces, "--output", dir.file("report.txt")])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("victim"))) == precious)
        for name in ["metrics.prom", "rules.prom.yaml", "report.txt"] {
            var info = stat()
            #expect(lstat(dir.file(name), &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG, "\(name) is still a link")
        }
        #expect(try String(contentsOfFile: dir.file("metrics.prom"), encoding: .utf8).contains("apitrace_http_client_requests_total"))
        // A link at the export state's name is refused (the state is not read through it) and left alone.
        try FileManager.default.createSymbolicLink(atPath: dir.file("linked-state.json"), withDestinationPath: dir.file("victim"))
        let linked = try await Self.apitraceWithin(["export", folder.traces, "--format", "prometheus", "--state", dir.file("linked-state.json")])
        #expect(linked.status == 1 && linked.stderr.contains("symbolic link"), "\(linked.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("victim"))) == precious)
        // A FIFO there is refused too, at once.
        #expect(mkfifo(dir.file("fifo-state.json"), 0o644) == 0)
        let fifo = try await Self.apitraceWithin(["export", folder.traces, "--format", "prometheus", "--state", dir.file("fifo-state.json")])
        #expect(fifo.status == 1 && fifo.stderr.contains("FIFO"), "\(fifo.stderr)")
    }

    @Test("a rules file nested 5,000 deep, or 180,000 deep through a chain of aliases, is a clear error for every command that reads it, not a crash")
    func deepRules() async throws {
        let dir = TemporaryDirectory()
        let flow = try TraceFixture.rules("rules: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\n", in: dir, name: "flow.yaml")
        let block = try TraceFixture.rules("rules:\n" + String(repeating: "- ", count: 5000) + "x\n", in: dir, name: "block.yaml")
        let aliases = try TraceFixture.rules((0..<3000).map { i in
            "x\(i): &x\(i) " + String(repeating: "[", count: 60) + (i == 0 ? "1" : "*x\(i - 1)") + String(repeating: "]", count: 60)
        }.joined(separator: "\n") + "\nrules: *x2999\n", in: dir, name: "aliases.yaml")
        for rules in [flow, block, aliases] {
            let check = try await Self.apitraceWithin(["alert", "--check-config", "--rules", rules])
            #expect(check.status == 2 && check.stderr.contains("nested more than 64 levels"), "\(check.stderr)")
            let translate = try await Self.apitraceWithin(["rules", "--format", "prometheus", "--rules", rules])
            #expect(translate.status == 2 && translate.stderr.contains(rules), "\(translate.stderr)")
        }
    }
}
