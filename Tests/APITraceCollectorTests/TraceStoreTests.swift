import APITraceTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Testing

/// The collector's store: segments appended per producer, sealed by the hour, stored exactly once,
/// shared by several collectors, repaired after a crash; read back by Python's gzip and json.
@Suite("the collector's appending store")
struct TraceStoreTests {
    static let hour: Int64 = 3_600_000
    static let minute: Int64 = 60_000

    /// One segment: `count` requests, the first stamped `lead` before the header's start (events
    /// queued before the writer named its file, within the 2-minute slack of Docs/trace-format.md).
    static func segment(_ producer: String, started: TraceTimestamp, count: Int, seed: Int, lead: Int64 = 0, app: String = "test") -> [UInt8] {
        var out = JSONOutput()
        TraceFileHeader(version: 1, producer: producer, app: app, started: started).encode(to: &out)
        out.bytes.append(0x0A)
        for (i, event) in TraceFiles.requests(count, seed: seed, start: started).enumerated() {
            var event = event
            if i == 0 { event.timestamp = started.adding(milliseconds: -lead) }
            event.encode(to: &out)
            out.bytes.append(0x0A)
        }
        return try! GzipDeflater.compress(out.bytes)
    }

    /// Events and headers per file, and every event's (file, timestamp), as Python's gzip and json read them.
    static func pythonCounts(_ root: String) async throws -> (events: Int, headers: Int, files: [String: Int], stamps: [(String, Int64)]) {
        let script = """
        import gzip, json, os, sys, datetime
        root = sys.argv[1]
        for day in sorted(os.listdir(root)):
            if not day.startswith('dt='): continue
            for name in sorted(os.listdir(os.path.join(root, day))):
                if name.startswith('.'): continue
                with gzip.open(os.path.join(root, day, name), 'rt') as f:
                    for line in f:
                        o = json.loads(line)
                        if o['type'] == 'header': print('H', day + '/' + name); continue
                        t = datetime.datetime.strptime(o['ts'], '%Y-%m-%dT%H:%M:%S.%fZ').replace(tzinfo=datetime.timezone.utc)
                        print('E', day + '/' + name, round(t.timestamp() * 1000))
        """
        let result = try await runChild(try #require(OutsideTool.python3.path), ["-c", script, root])
        #expect(result.status == 0, "\(result.stderr)")
        var events = 0, headers = 0
        var files: [String: Int] = [:]
        var stamps: [(String, Int64)] = []
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts[0] == "H" { headers += 1; files[String(parts[1]), default: 0] += 0 } else {
                events += 1
                files[String(parts[1]), default: 0] += 1
                stamps.append((String(parts[1]), Int64(parts[2])!))
            }
        }
        return (events, headers, files, stamps)
    }

    static func visibleTraceFiles(_ root: String) -> [String] {
        TraceFiles.allFiles(under: root).filter { !$0.hasPrefix(".") && !$0.split(separator: "/").last!.hasPrefix(".") }
    }

    @Test("a producer's segments go to one open file, sealed at the first segment of a later hour into a name carrying its span; every event is stored once")
    func appendsAndSealsByHour() async throws {
        let dir = TemporaryDirectory()
        let collector = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        let start = TraceTimestamp(rfc3339: "2026-11-22T10:05:00.000Z")!
        var sent = 0
        // Every 10 minutes for 3 hours, for two producers.
        for k in 0..<18 {
            for producer in ["pa", "pb"] {
                let started = start.adding(milliseconds: Int64(k) * 10 * Self.minute)
                let bytes = Self.segment(producer, started: started, count: 5 + k, seed: k, lead: 90_000)
                let reply = bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }
                #expect(reply.status == 201, "\(reply.message)")
                sent += 5 + k
            }
        }
        let files = Self.visibleTraceFiles(dir.path)
        // Per producer: 10:05-10:55 sealed at 11:05, 11:05-11:55 sealed at 12:05, 12:05-12:55 open.
        #expect(files.count == 6, "\(files)")
        let identities = files.compactMap { TraceFileIdentity(fileName: $0) }
        #expect(identities.count == 6)
        for producer in ["pa", "pb"] {
            let mine = identities.filter { $0.producer == producer }.sorted { $0.started < $1.started }
            #expect(mine.map(\.started) == [start, start.adding(milliseconds: Self.hour), start.adding(milliseconds: 2 * Self.hour)])
            #expect(mine.map(\.ended) == [start.adding(milliseconds: Self.hour), start.adding(milliseconds: 2 * Self.hour), nil])
            #expect(mine.last?.kind == .open)
        }
        let python = try await Self.pythonCounts(dir.path)
        #expect(python.events == sent)
        #expect(python.headers == 36)
        // Sealed files are read-only: finished by construction.
        for file in files where TraceFileIdentity(fileName: file)?.isFinishedByConstruction == true {
            let permissions = try FileManager.default.attributesOfItem(atPath: dir.file(file))[.posixPermissions] as? Int
            #expect(permissions.map { $0 & 0o222 == 0 } == true, "\(file)")
        }
        // No event is outside the span selection gives its file (events stamped 90 s before their segment's start).
        for (file, stamp) in python.stamps {
            #expect(TraceFileSelection.select(files.map { dir.file($0) }, overlapping: [stamp..<(stamp + 1)]).contains(dir.file(file)), "\(file) \(stamp)")
        }
        // Sealed files are cacheable; the open ones are not.
        let plan = TraceFileSelection.plan(files.map { dir.file($0) })
        #expect(plan.filter(\.isCacheable).count == 4)
    }

    @Test("a segment sent again (a lost receipt) is already stored, whatever file now holds it; one sent late is stored apart, its span ending where the open file starts")
    func resentAndLateSegments() async throws {
        let dir = TemporaryDirectory()
        let collector = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        let start = TraceTimestamp(rfc3339: "2026-11-22T10:00:00.000Z")!
        let segments = (0..<8).map { k in Self.segment("p", started: start.adding(milliseconds: Int64(k) * 20 * Self.minute), count: 10, seed: k) }
        func send(_ bytes: [UInt8]) -> TraceCollector.Reply {
            bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }
        }
        // Segment 2 is late: it arrives after 3 and 4 (the next hour's open file).
        for k in [0, 1, 3, 4] { #expect(send(segments[k]).status == 201) }
        for k in [0, 1, 3, 4] { #expect(send(segments[k]).status == 200, "segment \(k) again") }
        #expect(send(segments[2]).status == 201)
        #expect(send(segments[2]).status == 200)
        for k in 5..<8 { #expect(send(segments[k]).status == 201) }
        for k in 0..<8 { #expect(send(segments[k]).status == 200, "segment \(k) at the end") }
        let python = try await Self.pythonCounts(dir.path)
        #expect(python.events == 80 && python.headers == 8)
        let files = Self.visibleTraceFiles(dir.path)
        let late = try #require(files.compactMap { TraceFileIdentity(fileName: $0) }.first { $0.started == start.adding(milliseconds: 40 * Self.minute) })
        #expect(late.ended == start.adding(milliseconds: 60 * Self.minute))
        for (file, stamp) in python.stamps {
            #expect(TraceFileSelection.select(files.map { dir.file($0) }, overlapping: [stamp..<(stamp + 1)]).contains(dir.file(file)))
        }
    }

    @Test("a skewed device clock: spans are the producer's, so a store of a clock days off is pruned and cached by its own times")
    func skewedClock() async throws {
        let dir = TemporaryDirectory()
        let collector = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        // Three days ahead of this machine and the next producer three days behind.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for (producer, skew) in [("ahead", 3 * 24 * Self.hour), ("behind", -3 * 24 * Self.hour)] {
            for k in 0..<6 {
                let started = TraceTimestamp(millisecondsSince1970: (now + skew) / 1000 * 1000 + Int64(k) * 25 * Self.minute)
                let bytes = Self.segment(producer, started: started, count: 7, seed: k, lead: 100_000)
                #expect(bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }.status == 201)
            }
        }
        let files = Self.visibleTraceFiles(dir.path).map { dir.file($0) }
        let python = try await Self.pythonCounts(dir.path)
        #expect(python.events == 84)
        for (file, stamp) in python.stamps {
            #expect(TraceFileSelection.select(files, overlapping: [stamp..<(stamp + 1)]).contains(dir.file(file)), "\(file)")
        }
        // The last two hours by this machine's clock hold no event of either producer: only open files are read.
        let recent = TraceFileSelection.select(files, overlapping: [(now - 2 * Self.hour)..<now])
        #expect(recent.allSatisfy { TraceFileIdentity(fileName: $0)?.kind == .open }, "\(recent)")
    }

    @Test("an append cut by a crash (bytes past the journal's last record) is cut back before the next, by a restarted collector")
    func crashMidAppendIsRepaired() async throws {
        let dir = TemporaryDirectory()
        let start = TraceTimestamp(rfc3339: "2026-11-22T10:00:00.000Z")!
        let first = Self.segment("crash", started: start, count: 20, seed: 1)
        let second = Self.segment("crash", started: start.adding(milliseconds: 5 * Self.minute), count: 30, seed: 2)
        let (collector, port) = try await CollectorProcesses.start(dir)
        #expect(try await HTTPClient.upload("http://127.0.0.1:\(port)/v1/traces", first, token: CollectorProcesses.token).status == 201)
        try await collector.kill(SIGKILL)
        // What a SIGKILL between the write of a member and its journal line leaves: half a member past
        // the recorded length (written by the test: the kill cannot be timed inside that window).
        let open = try #require(Self.visibleTraceFiles(dir.path).first)
        let handle = try #require(FileHandle(forWritingAtPath: dir.file(open)))
        handle.seekToEndOfFile()
        handle.write(Data(second.prefix(second.count / 2)))
        try handle.close()
        let (restarted, port2) = try await CollectorProcesses.start(dir)
        defer { restarted.stop() }
        #expect(try await HTTPClient.upload("http://127.0.0.1:\(port2)/v1/traces", second, token: CollectorProcesses.token).status == 201)
        let python = try await Self.pythonCounts(dir.path)
        #expect(python.events == 50 && python.headers == 2)
        let size = try #require(FileStatus(path: dir.file(open))).size
        #expect(size == Int64(first.count + second.count))
    }

    @Test("an open file no segment reached for an hour is sealed by a collector running on the store; its segments stay known")
    func idleOpenFilesAreSealed() async throws {
        let dir = TemporaryDirectory()
        let start = TraceTimestamp(rfc3339: "2026-11-22T10:00:00.000Z")!
        let segments = (0..<3).map { Self.segment("idle", started: start.adding(milliseconds: Int64($0) * 5 * Self.minute), count: 10, seed: $0) }
        let (first, port) = try await CollectorProcesses.start(dir)
        for bytes in segments {
            #expect(try await HTTPClient.upload("http://127.0.0.1:\(port)/v1/traces", bytes, token: CollectorProcesses.token).status == 201)
        }
        try await first.kill(SIGTERM)
        let open = try #require(Self.visibleTraceFiles(dir.path).first)
        #expect(TraceFileIdentity(fileName: open)?.kind == .open)
        // An hour and a half without a segment, by the file's modification time.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -5400)], ofItemAtPath: dir.file(open))
        let (second, port2) = try await CollectorProcesses.start(dir)
        defer { second.stop() }
        try await waitUntil("the idle open file sealed") {
            Self.visibleTraceFiles(dir.path).first.flatMap { TraceFileIdentity(fileName: $0) }?.isFinishedByConstruction == true
        }
        let files = Self.visibleTraceFiles(dir.path)
        #expect(files.count == 1)
        let permissions = try FileManager.default.attributesOfItem(atPath: dir.file(files[0]))[.posixPermissions] as? Int
        #expect(permissions.map { $0 & 0o222 == 0 } == true)
        let python = try await Self.pythonCounts(dir.path)
        #expect(python.events == 30 && python.headers == 3)
        #expect(try await HTTPClient.upload("http://127.0.0.1:\(port2)/v1/traces", segments[1], token: CollectorProcesses.token).status == 200)
    }

    @Test("two apitrace collect processes on one store, each segment sent to both: stored and counted once")
    func twoCollectorsShareAStore() async throws {
        let dir = TemporaryDirectory()
        let (a, portA) = try await CollectorProcesses.start(dir)
        defer { a.stop() }
        let (b, portB) = try await CollectorProcesses.start(dir)
        defer { b.stop() }
        let start = TraceTimestamp(rfc3339: "2026-11-22T10:00:00.000Z")!
        var segments: [[UInt8]] = []
        for k in 0..<12 {
            for p in 0..<4 {
                segments.append(Self.segment("dev\(p)", started: start.adding(milliseconds: Int64(k) * 15 * Self.minute + Int64(p) * 1000), count: 3 + p, seed: k * 4 + p))
            }
        }
        // Each device sends its segments in order (as an uploader does), each to both collectors at once; the devices in parallel.
        let inOrder = segments
        let statuses = try await withThrowingTaskGroup(of: [[Int]].self) { group in
            for p in 0..<4 {
                group.addTask {
                    var pairs: [[Int]] = []
                    for k in 0..<12 {
                        let bytes = inOrder[k * 4 + p]
                        async let one = HTTPClient.upload("http://127.0.0.1:\(k % 2 == 0 ? portA : portB)/v1/traces", bytes, token: CollectorProcesses.token)
                        async let two = HTTPClient.upload("http://127.0.0.1:\(k % 2 == 0 ? portB : portA)/v1/traces", bytes, token: CollectorProcesses.token)
                        pairs.append(try await [one.status, two.status].sorted())
                    }
                    return pairs
                }
            }
            var all: [[Int]] = []
            for try await pairs in group { all += pairs }
            return all
        }
        #expect(statuses.allSatisfy { $0 == [200, 201] }, "\(statuses)")
        let python = try await Self.pythonCounts(dir.path)
        #expect(python.headers == segments.count)
        #expect(python.events == 12 * (3 + 4 + 5 + 6))
        // Bounded by time and producers: 4 producers x 3 hours, not a file per upload (48).
        #expect(Self.visibleTraceFiles(dir.path).count == 12, "\(Self.visibleTraceFiles(dir.path))")
        let metricsA = try await HTTPClient.request("GET", "http://127.0.0.1:\(portA)/metrics").text
        let metricsB = try await HTTPClient.request("GET", "http://127.0.0.1:\(portB)/metrics").text
        func accepted(_ text: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix("apitrace_collector_files_accepted_total ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
        }
        #expect(accepted(metricsA) + accepted(metricsB) == segments.count)
    }

    @Test("report and alert cache sealed store files: outputs byte-identical to --no-cache, and the cache holds the sealed files")
    func storeIsCachedLikeAFolder() async throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let collector = try TraceCollector(configuration: .init(directory: store, tokens: ["t"]))
        let now = Int64(Date().timeIntervalSince1970 * 1000) / 1000 * 1000
        for k in 0..<24 {
            for p in 0..<3 {
                let started = TraceTimestamp(millisecondsSince1970: now - 6 * Self.hour + Int64(k) * 15 * Self.minute + Int64(p) * 1000)
                let bytes = Self.segment("dev\(p)", started: started, count: 20, seed: k * 3 + p, lead: 30_000)
                #expect(bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }.status == 201)
            }
        }
        let cache = dir.file("cache")
        // Absolute times: a window relative to each run's clock would move between the runs compared.
        let until = ["--until", TraceTimestamp(millisecondsSince1970: now + Self.hour).rfc3339]
        for args in [until, until + ["--since", TraceTimestamp(millisecondsSince1970: now - 2 * Self.hour).rfc3339]] {
            let first = try await apitrace(["report", store, "--cache-dir", cache] + args)
            let second = try await apitrace(["report", store, "--cache-dir", cache] + args)
            let uncached = try await apitrace(["report", store, "--no-cache"] + args)
            #expect(first.status == 0 && second.status == 0 && uncached.status == 0, "\(first.stderr)")
            #expect(first.stdout == uncached.stdout && second.stdout == uncached.stdout)
            #expect(first.stderr == "" && second.stderr == "", "\(first.stderr) | \(second.stderr)")
        }
        let cached = TraceFiles.allFiles(under: cache)
        #expect(!cached.isEmpty, "nothing was cached")
        let rules = dir.file("rules.yaml")
        try "rules:\n  - name: api-errors\n    slo: 0.99\n".write(toFile: rules, atomically: true, encoding: .utf8)
        // The first run counts every file (its cache is empty); a second run from the same state with its cache must say the same.
        let at = TraceTimestamp(millisecondsSince1970: now).rfc3339
        let once = try await apitrace(["alert", store, "--rules", rules, "--state", dir.file("one.json"), "--verbose", "--now", at])
        let counts = try #require(FileManager.default.contents(atPath: dir.file("one.json.counts")), "no count cache written: \(once.status) \(once.stdout) \(once.stderr)")
        #expect(!counts.isEmpty)
        #expect(FileManager.default.createFile(atPath: dir.file("two.json.counts"), contents: counts))
        let twice = try await apitrace(["alert", store, "--rules", rules, "--state", dir.file("two.json"), "--verbose", "--now", at])
        #expect(once.status == twice.status && once.stdout == twice.stdout && !once.stdout.isEmpty, "\(once.stdout) \(once.stderr) / \(twice.stdout) \(twice.stderr)")
    }
}

/// `apitrace collect` as a child process on a folder.
enum CollectorProcesses {
    static let token = "secret-token"

    static func start(_ dir: TemporaryDirectory) async throws -> (ChildProcess, Int) {
        let child = try ChildProcess(
            try builtProduct("apitrace").path,
            ["collect", "--listen", "127.0.0.1:0", "--dir", dir.path, "--token-env", "APITRACE_TEST_TOKEN"],
            environment: ["APITRACE_TEST_TOKEN": token, "LOG_LEVEL": "error"])
        let line = try await child.waitForLine("the collector to listen") { $0.contains("listening on http://127.0.0.1:") }
        let port = Int(line.split(separator: ":")[3].split(separator: "/")[0])!
        return (child, port)
    }
}
