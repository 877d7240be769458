@testable import APITraceAlerting
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// A `new_failures` rule judges a week of baseline at every cron run; finished files come from
/// their cached summaries, and the answer must be the one a full read gives.
@Suite("new-failure scan and its cache")
struct NewFailureScanTests {
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    let now = TraceFixture.now.millisecondsSince1970

    static func decode(_ ms: Int64, session: String, path: String, entity: String = "App") -> TraceEvent {
        TraceEvent(timestamp: .init(millisecondsSince1970: ms), session: session, .decodeFailure(.init(
            route: "/apps", entity: entity, kind: .keyNotFound, path: path, key: "k", message: "missing")))
    }

    static func error(_ ms: Int64, session: String, identity: String) -> TraceEvent {
        TraceEvent(timestamp: .init(millisecondsSince1970: ms), session: session, .error(.init(identity: identity, message: "failed")))
    }

    /// Six days of 2.3.0 with two known groups, then an hour of 2.4.0 with one of them, a new one
    /// and a regression of a group last seen five days ago.
    @discardableResult
    func week(in traces: String) throws -> [String] {
        var old: [TraceEvent] = []
        for h in Int64(-6 * 24)..<(-2) {
            let t = now + h * Self.hour
            old.append(Self.decode(t + 1000, session: "o\(h % 5)", path: "data.apps[\(h & 7)].logo"))
            old.append(Self.error(t + 2000, session: "o\(h % 3)", identity: "NewsError.offline"))
            if h < -5 * 24 { old.append(Self.decode(t + 3000, session: "o\(h % 4)", path: "data.banner.title", entity: "Banner")) }
        }
        let paths = try TraceFixture.write(old, to: traces, producer: "old", appVersion: "2.3.0")
        var new: [TraceEvent] = []
        for i in Int64(0)..<120 {
            let t = now - 50 * Self.minute + i * 20_000
            new.append(Self.decode(t, session: "n\(i % 20)", path: "data.apps[\(i)].stability"))
            if i % 4 == 0 { new.append(Self.error(t + 1, session: "n\(i % 20)", identity: "NewsError.offline")) }
            if i % 3 == 0 { new.append(Self.decode(t + 2, session: "n\(i % 20)", path: "data.banner.title", entity: "Banner")) }
        }
        try TraceFixture.write(new, to: traces, producer: "new", appVersion: "2.4.0")
        return paths
    }

    let rule = AlertRule.NewFailureDetection(minCount: 5, minSessions: 3, minSessionShare: 0)

    @Test func cachedBaselineGivesTheAnswerOfAFullRead() throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        try week(in: traces)
        let scan = NewFailureScan(detection: rule, scope: .init())
        let plain = scan.scan(paths: [traces], at: now)
        #expect(plain.failures.map(\.group).sorted() == ["App keyNotFound data.apps[*].stability", "Banner keyNotFound data.banner.title"])
        #expect(plain.failures.first { $0.group.hasPrefix("Banner") }?.regressed == true)
        #expect(plain.failures.first { $0.group.hasPrefix("App") }?.regressed == false)
        #expect(plain.warnings.isEmpty)

        let first = FileCountCache(path: dir.file("c"))
        let filling = scan.scan(paths: [traces], at: now, cache: first)
        first.save()
        let warm = scan.scan(paths: [traces], at: now, cache: FileCountCache(path: dir.file("c")))
        #expect(filling.failures == plain.failures)
        #expect(warm.failures == plain.failures)
        // 142 hourly files of 2.3.0; all but the last are finished, and all lie in the baseline.
        #expect(warm.filesFromCache == 141)
        // An hour later, the same summaries serve the next cron run.
        let later = scan.scan(paths: [traces], at: now + Self.hour, cache: FileCountCache(path: dir.file("c")))
        #expect(later.failures == scan.scan(paths: [traces], at: now + Self.hour).failures)
    }

    @Test func aRewrittenBaselineFileIsReadAfresh() throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        let old = try week(in: traces)
        let scan = NewFailureScan(detection: rule, scope: .init())
        let cache = FileCountCache(path: dir.file("c"))
        _ = scan.scan(paths: [traces], at: now, cache: cache)
        cache.save()
        // The stability failure existed in 2.3.0 three days ago after all: it is no longer new but regressed.
        let start = now - 3 * 24 * Self.hour
        #expect(old.count == 142)
        let header = TraceFileHeader(producer: "old", app: "Otec", appVersion: "2.3.0", host: nil, started: .init(millisecondsSince1970: start))
        let text = header.jsonLine + "\n" + Self.decode(start + 5, session: "o1", path: "data.apps[3].stability").jsonLine + "\n"
        try Data(try GzipDeflater.compress(Array(text.utf8), level: 5)).write(to: URL(fileURLWithPath: old[6 * 24 - 3 * 24]))
        let after = scan.scan(paths: [traces], at: now, cache: FileCountCache(path: dir.file("c")))
        #expect(after.failures.first { $0.group.hasPrefix("App") }?.regressed == true)
        #expect(after.failures == scan.scan(paths: [traces], at: now).failures)
    }

    @Test func groupsPastTheBoundAreCountedAndSaid() throws {
        let dir = TemporaryDirectory()
        let extra = 37
        var events: [TraceEvent] = []
        for i in 0..<(NewFailureScan.maximumGroups + extra) {
            // Two events of each group but the first thousand, in two hourly files read in parallel,
            // so the count said is of events, over the merge of both files.
            events.append(Self.error(now - 80 * Self.minute + Int64(i), session: "s\(i % 9)", identity: "E\(i)"))
            if i >= 1000 { events.append(Self.error(now - 20 * Self.minute + Int64(i), session: "s\(i % 9)", identity: "E\(i)")) }
        }
        try TraceFixture.write(events.sorted { $0.timestamp < $1.timestamp }, to: dir.path)
        let result = NewFailureScan(detection: rule, scope: .init()).scan(paths: [dir.path], at: now)
        let limits = result.warnings.filter { if case .limitReached = $0.kind { true } else { false } }
        #expect(limits.count == 1)
        #expect("\(limits.first.map { "\($0)" } ?? "")".contains("\(2 * extra) events"))
    }

    @Test func aDamagedCacheIsAnEmptyOne() throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        try week(in: traces)
        let scan = NewFailureScan(detection: rule, scope: .init())
        let cache = FileCountCache(path: dir.file("c"))
        let expected = scan.scan(paths: [traces], at: now, cache: cache).failures
        cache.save()
        let valid = try Data(contentsOf: URL(fileURLWithPath: dir.file("c")))
        #expect(FileCountCache.decode(valid) != nil)
        // Every cut of a valid cache, and counts claiming billions of entries, decode to nothing.
        for cut in stride(from: 0, to: valid.count, by: max(1, valid.count / 500)) {
            #expect(FileCountCache.decode(valid.prefix(cut)) == nil)
        }
        var huge = valid
        huge.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(FileCountCache.decode(huge) == nil)
        try huge.write(to: URL(fileURLWithPath: dir.file("c")))
        #expect(scan.scan(paths: [traces], at: now, cache: FileCountCache(path: dir.file("c"))).failures == expected)
    }
}

extension NewFailureScanTests {
    @Test func forgedCountsInTheCacheSaturateInsteadOfTrapping() throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        let old = try week(in: traces)
        let scan = NewFailureScan(detection: rule, scope: .init())
        let cache = FileCountCache(path: dir.file("c"))
        _ = scan.scan(paths: [traces], at: now, cache: cache)
        cache.save()
        // Two baseline files claim more groups than the bound, each with the largest count there is.
        var entries = try #require(FileCountCache.decode(try Data(contentsOf: URL(fileURLWithPath: dir.file("c")))))
        for (index, path) in old.prefix(2).enumerated() {
            var entry = try #require(entries[path])
            var summary = try #require(entry.groups[scan.cacheSignature])
            summary.groups = (0...NewFailureScan.maximumGroups).map {
                .init(key: "Forged\(index).\($0)", isDecodeFailure: false, count: .max, last: summary.first)
            }
            entry.groups[scan.cacheSignature] = summary
            entries[path] = entry
        }
        try FileCountCache.encode(entries).write(to: URL(fileURLWithPath: dir.file("c")))
        let result = scan.scan(paths: [traces], at: now, cache: FileCountCache(path: dir.file("c")))
        #expect(result.filesFromCache == 141)
        #expect(result.warnings.contains { "\($0)".contains("\(Int64.max) events") })
    }

    @Test func nonFiniteOrNegativeBucketCountsMakeTheCacheEmpty() throws {
        var run = BucketRun()
        run.add(bucket: 1, requests: 10, failures: 2)
        let status = FileStatus(size: 1, modifiedNanoseconds: 2, inode: 3)
        let valid = FileCountCache.encode(["f": .init(status: status, runs: ["s": run])])
        #expect(FileCountCache.decode(valid)?["f"]?.runs["s"]?.requests == [10])
        for bad in [Double.nan, .infinity, -1] {
            var forged = run
            forged.failures[0] = bad
            #expect(FileCountCache.decode(FileCountCache.encode(["f": .init(status: status, runs: ["s": forged])])) == nil)
        }
    }
}
