import APITraceAlerting
import APITraceCollector
import APITraceFormat
import APITraceTestSupport
import APITraceCollectorTestSupport
import Foundation
import Testing

/// The alert's count cache on what a collector is still appending to: a real `TraceCollector` on
/// 127.0.0.1 takes real gzip uploads and appends them to one open file per producer; cron-like
/// counts with the cache must equal counts without it and an independent count of the events,
/// while reading only the members appended since the last run.
@Suite struct AlertCountCacheTests {
    let now = TraceFixture.now.millisecondsSince1970
    let minute = TraceFixture.minute
    let rule = AlertRule(name: "all", slo: 0.99)
    static let token = "secret-token"

    /// Requests and failures of `events` in `range`, counted straight from the events (every
    /// failure is a 503, no sampling).
    func expected(_ events: [TraceEvent], in range: Range<Int64>) -> WindowTotals {
        var requests = 0.0, failures = 0.0
        for e in events {
            guard case .request(let r) = e.payload, range.contains(e.timestamp.millisecondsSince1970) else { continue }
            requests += 1
            if r.status.map({ (500...599).contains($0) }) ?? true { failures += 1 }
        }
        return WindowTotals(requests: requests, failures: failures)
    }

    /// One segment as an uploader sends it: a header started at `started` and the events, gzip.
    func segment(_ events: [TraceEvent], started: Int64) throws -> [UInt8] {
        let header = TraceFileHeader(producer: "phone1", app: "Otec", appVersion: "2.1", host: "phone-7",
                                     started: TraceTimestamp(millisecondsSince1970: started))
        var text = header.jsonLine + "\n"
        for event in events { text += event.jsonLine + "\n" }
        return try GzipDeflater.compress(Array(text.utf8), level: 5)
    }

    func traffic(_ from: Int64, _ to: Int64, failing: Double) -> [TraceEvent] {
        TraceFixture.events([.init(from: from, to: to, perMinute: 20, failureRatio: failing)])
    }

    func count(_ folder: String, cache: FileCountCache?) -> WindowedFailureCounter.Result {
        WindowedFailureCounter(rules: [rule], ranges: rule.countedRanges(from: now, to: now), cache: cache).count(paths: [folder])
    }

    /// The windows compared: the rule's burn-rate windows.
    var windows: [Range<Int64>] { [5, 30, 60, 360].map { (now - $0 * minute)..<now } }

    func expectSame(_ cached: WindowedFailureCounter.Result, _ uncached: WindowedFailureCounter.Result, _ events: [TraceEvent],
                    sourceLocation: SourceLocation = #_sourceLocation) {
        for window in windows {
            #expect(cached.counts[0].totals(in: window) == uncached.counts[0].totals(in: window), sourceLocation: sourceLocation)
            #expect(cached.counts[0].totals(in: window) == expected(events, in: window), sourceLocation: sourceLocation)
        }
    }

    @Test("a collector's open file appended to between two runs: the next run inflates only the new members and counts them once")
    func appendedMembersAreCountedOnce() async throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let server = try await RunningCollector.start(try TraceCollector(configuration: .init(directory: store, tokens: [Self.token])))
        let hour = now - 60 * minute
        let first = traffic(-58, -40, failing: 0.05), second = traffic(-40, -20, failing: 0.1), third = traffic(-20, -1, failing: 0.5)
        for (events, started) in [(first, hour + 30_000), (second, hour + 20 * minute)] {
            #expect(try await HTTPClient.upload(server.uploadURL, try segment(events, started: started)).status == 201)
        }
        let open = try #require(TraceFileDiscovery.find([store]).files.first { TraceFileIdentity(fileName: $0)?.kind == .open })
        let cachePath = dir.file("state.json.counts")

        let cold = count(store, cache: FileCountCache(path: cachePath))
        expectSame(cold, count(store, cache: nil), first + second)
        #expect(cold.filesOpened == 1 && cold.linesScanned == first.count + second.count)

        let sizeBefore = try #require(FileStatus(path: open)).size
        #expect(try await HTTPClient.upload(server.uploadURL, try segment(third, started: hour + 40 * minute)).status == 201)
        await server.stop()
        // Still the same open file, grown by one member.
        #expect(TraceFileIdentity(fileName: open)?.kind == .open && (FileStatus(path: open)?.size ?? 0) > sizeBefore)

        let next = count(store, cache: FileCountCache(path: cachePath))
        expectSame(next, count(store, cache: nil), first + second + third)
        // Only the appended member was inflated: its events, not the file's.
        #expect(next.linesScanned == third.count, "\(next.linesScanned) lines read")

        let idle = count(store, cache: FileCountCache(path: cachePath))
        expectSame(idle, count(store, cache: nil), first + second + third)
        #expect(idle.filesFromCache == 1 && idle.linesScanned == 0)
    }

    /// An open file written member by member (the collector's layout: concatenated gzip members)
    /// in a folder of its own, so the test can cut and rewrite it.
    func writeOpenFile(_ segments: [[UInt8]], to path: String) throws {
        try Data(segments.joined()).write(to: URL(fileURLWithPath: path))
    }

    @Test("an open file rewritten or cut back under the same name is counted again in full",
          arguments: ["truncated in place", "rewritten in place", "replaced by rename"])
    func rewrittenOrTruncatedFilesAreRecounted(change: String) throws {
        let dir = TemporaryDirectory()
        let folder = dir.file("traces")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let hour = now - 60 * minute
        let path = folder + "/" + TraceFileIdentity(started: TraceTimestamp(millisecondsSince1970: hour), producer: "phone1", kind: .open).fileName
        let a = traffic(-58, -40, failing: 0.05), b = traffic(-40, -20, failing: 0.1)
        try writeOpenFile([try segment(a, started: hour), try segment(b, started: hour + 20 * minute)], to: path)
        let cachePath = dir.file("state.json.counts")
        let cold = count(folder, cache: FileCountCache(path: cachePath))
        expectSame(cold, count(folder, cache: nil), a + b)

        let current: [TraceEvent]
        switch change {
        case "truncated in place":
            // Only the first member is left: shorter than what the cache read.
            let first = try segment(a, started: hour)
            let fd = open(path, O_WRONLY)
            #expect(ftruncate(fd, off_t(first.count)) == 0)
            close(fd)
            current = a
        case "rewritten in place":
            // Same inode, other events, longer than before: the prefix's bytes differ.
            let c = traffic(-59, -30, failing: 0.7), d = traffic(-30, -2, failing: 0.3)
            let bytes = Array([try segment(c, started: hour), try segment(d, started: hour + 30 * minute)].joined())
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: bytes)
            try handle.close()
            current = c + d
        default:
            let c = traffic(-50, -10, failing: 0.6)
            try writeOpenFile([try segment(c, started: hour), try segment(b, started: hour + 20 * minute)], to: dir.file("new"))
            #expect(rename(dir.file("new"), path) == 0)
            current = c + b
        }
        let after = count(folder, cache: FileCountCache(path: cachePath))
        expectSame(after, count(folder, cache: nil), current)
        #expect(after.filesFromCache == 0 && after.linesScanned == current.count, "\(after.linesScanned) lines read")
    }

    @Test("a damaged, truncated, forged or foreign count cache is ignored with a warning naming it, and counting is unchanged",
          arguments: ["garbage", "truncated", "huge counts", "other version", "forged offset"])
    func hostileCacheFiles(kind: String) throws {
        let dir = TemporaryDirectory()
        let folder = dir.file("traces")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let hour = now - 60 * minute
        let path = folder + "/" + TraceFileIdentity(started: TraceTimestamp(millisecondsSince1970: hour), producer: "phone1", kind: .open).fileName
        let a = traffic(-58, -40, failing: 0.05), b = traffic(-40, -1, failing: 0.4)
        try writeOpenFile([try segment(a, started: hour), try segment(b, started: hour + 20 * minute)], to: path)
        _ = try TraceFixture.write(traffic(-360, -60, failing: 0.01), to: folder, producer: "phone2")
        let cachePath = dir.file("state.json.counts")
        let cache = FileCountCache(path: cachePath)
        _ = count(folder, cache: cache)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: cachePath))
        #expect(bytes.count > 64)
        switch kind {
        case "garbage": bytes = Data((0..<bytes.count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        case "truncated": bytes = bytes.prefix(bytes.count / 2)
        case "huge counts":
            // The number of entries, after the magic, the version and the client's name.
            let at = 12 + "alert-counts 2".utf8.count
            bytes.replaceSubrange(at..<(at + 4), with: [0xFF, 0xFF, 0xFF, 0x7F])
        case "other version": bytes.replaceSubrange(4..<8, with: [9, 0, 0, 0])
        default:
            // Every entry's prefix offset claims the file's middle: never a member boundary.
            var entries = try #require(FileCacheStore.decodeAll(Array(bytes), client: "alert-counts 2"))
            var entry = try #require(entries[path])
            let prefix = try #require(entry.prefix)
            entry.prefix = AppendedPrefix(path: path, offset: prefix.offset / 2)
            entries[path] = entry
            bytes = Data(FileCacheStore.encodeAll(entries, client: "alert-counts 2"))
        }
        try bytes.write(to: URL(fileURLWithPath: cachePath))
        let reopened = FileCountCache(path: cachePath)
        let result = count(folder, cache: reopened)
        expectSame(result, count(folder, cache: nil), TraceFixture.events([.init(from: -360, to: -60, perMinute: 20, failureRatio: 0.01)]) + a + b)
        if kind == "forged offset" {
            // A forged offset in a well-formed store: reading from it fails, the file is read in full.
            // (Plus the 1,200 events of phone2's last file, 10:00 to 11:00, which is never cached: its writer may append.)
            #expect(result.warnings.isEmpty && result.linesScanned == a.count + b.count + 1_200, "\(result.linesScanned) lines read")
        } else {
            #expect(reopened.problem?.contains(cachePath) == true, "\(reopened.problem ?? "no problem said")")
        }
    }

    @Test("apitrace alert says it ignored a damaged count cache, naming it, prints what a run without a cache prints, and rebuilds it")
    func damagedCacheWarnsInTheCLI() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let rules = try TraceFixture.rules("rules:\n  - name: api-errors\n    slo: 0.99\n", in: dir)
        let state = dir.file("state.json")
        try Data("ATFS not a cache at all".utf8).write(to: URL(fileURLWithPath: state + ".counts"))
        let run = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", state, "--now", AlertCommandTests.at(0)],
                                     environment: AlertCommandTests.env)
        #expect(run.stderr.contains("ignoring the cache") && run.stderr.contains(state + ".counts"), "\(run.stderr)")
        // What it says of the traces is what a run without any cache says.
        let fresh = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("fresh.json"), "--now", AlertCommandTests.at(0)],
                                       environment: AlertCommandTests.env)
        #expect(run.status == fresh.status && run.stdout == fresh.stdout && !run.stdout.isEmpty, "\(run.stdout)\n---\n\(fresh.stdout)")
        let rebuilt = try Data(contentsOf: URL(fileURLWithPath: state + ".counts"))
        #expect(FileCacheStore.decodeAll(Array(rebuilt), client: "alert-counts 2")?.isEmpty == false)
        // The next run finds nothing to say about the cache.
        let next = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", state, "--now", AlertCommandTests.at(1)],
                                      environment: AlertCommandTests.env)
        #expect(!next.stderr.contains("ignoring the cache"), "\(next.stderr)")
    }
}
