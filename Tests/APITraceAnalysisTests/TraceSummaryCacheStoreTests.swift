@testable import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import APITraceSynthetic
import Foundation
import Testing

/// The summary cache as a client of the one per-file cache store: one file read once, runs saving
/// at once both keeping their entries, a merged summary standing in for unchanged files, damaged
/// sections ignored with a warning naming the cache.
@Suite("TraceSummaryCache on the per-file cache store")
struct TraceSummaryCacheStoreTests {
    static func json(_ summary: TraceSummary) -> String {
        TraceReport(summary: summary, options: .init(sources: ["x"], byAppVersion: true)).render(.json)
    }

    /// The whole-file entry of a trace file, as the summarizer stores it.
    static func entry(_ path: String) -> TraceSummaryCache.Entry {
        var aggregator = TraceAggregator()
        aggregator.read(TraceFileReader(path: path))
        return .init(summary: aggregator.summary(), header: aggregator.lastHeader.map(\.appVersion))
    }

    static func store(_ cache: TraceSummaryCache, _ path: String) throws {
        #expect(cache.store(entry(path), absolutePath: path, path: path, status: try #require(FileStatus(path: path)), granularity: 1))
    }

    static func hit(_ cache: TraceSummaryCache, _ path: String) throws -> Bool {
        cache.entry(absolutePath: path, path: path, status: try #require(FileStatus(path: path)), granularity: 1) != nil
    }

    /// Every entry of the cache's store file, read independently of the cache.
    static func stored(_ folder: String) throws -> [String: FileCacheStore.Entry] {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + TraceSummaryCache.fileName)))
        return try #require(FileCacheStore.decodeAll(bytes, client: TraceSummaryCache.client))
    }

    @Test("two runs saving at once both keep their entries: a later run is served every file from the one store")
    func interleavedRuns() throws {
        let traces = try GeneratedTraces(events: 6000, files: 5, seed: 31)
        let folder = TemporaryDirectory()
        // Both runs read the (empty) store before either saves: B saves first, then A, which must
        // not write over what B stored.
        let a = TraceSummaryCache(directory: folder.path), b = TraceSummaryCache(directory: folder.path)
        try Self.store(a, traces.paths[0])
        try Self.store(b, traces.paths[1])
        try Self.store(b, traces.paths[2])
        b.finish()
        try Self.store(a, traces.paths[2])
        try Self.store(a, traces.paths[3])
        a.finish()
        #expect(a.statistics.stored == 3 && b.statistics.stored == 2 && !a.statistics.readOnly)
        #expect(Set(try Self.stored(folder.path).keys) == Set(traces.paths.prefix(4)))
        // Only the store and its lock file: no temporary file left behind.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == [TraceSummaryCache.fileName, TraceSummaryCache.fileName + ".lock"])
        let later = TraceSummaryCache(directory: folder.path)
        for path in traces.paths.prefix(4) { #expect(try Self.hit(later, path), "\(path)") }
        #expect(later.statistics.hits == 4 && later.statistics.misses == 0 && later.problems.isEmpty)
    }

    @Test("an entry is served only while its file is unchanged; a touched file is read again")
    func staleEntry() throws {
        let traces = try GeneratedTraces(events: 3000, files: 2, seed: 32)
        let folder = TemporaryDirectory()
        let path = traces.paths[0]
        let first = TraceSummaryCache(directory: folder.path)
        try Self.store(first, path)
        first.finish()
        #expect(try Self.hit(TraceSummaryCache(directory: folder.path), path))
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 5), timespec(tv_sec: 1_700_000_000, tv_nsec: 5)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try !Self.hit(TraceSummaryCache(directory: folder.path), path))
    }

    @Test("an unfiltered run keeps the merge of its files; the next uses it while every file is unchanged, otherwise the entries")
    func mergedSummary() throws {
        let traces = try GeneratedTraces(events: 8000, files: 5, seed: 36)
        let folder = TemporaryDirectory()
        let paths = [traces.folder.path]
        let uncached = Self.json(TraceSummarizer().summarize(paths: paths))
        let cold = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: cold).summarize(paths: paths)) == uncached)
        #expect(cold.statistics.stored == 4)
        #expect(try Self.stored(folder.path)[TraceSummaryCache.mergedKey] != nil)

        let warm = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: warm).summarize(paths: paths)) == uncached)
        #expect(warm.statistics.hits == 4 && warm.statistics.mergedHits == 4 && warm.statistics.stored == 0)

        // A time range holding every file uses it too (`--until now`, the report of a cron job).
        var holding = TraceFilter()
        holding.since = TraceTimestamp(millisecondsSince1970: 0)
        let ranged = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: holding, cache: ranged).summarize(paths: paths))
            == Self.json(TraceSummarizer(filter: holding).summarize(paths: paths)))
        #expect(ranged.statistics.hits == 4 && ranged.statistics.mergedHits == 4)

        // An app-version filter uses the entries.
        var version = TraceFilter()
        version.appVersion = "2.3.0"
        let filtered = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: version, cache: filtered).summarize(paths: paths))
            == Self.json(TraceSummarizer(filter: version).summarize(paths: paths)))
        #expect(filtered.statistics.hits == 4 && filtered.statistics.mergedHits == 0)

        // A range cutting through the files uses the entries of the files it holds, and its merge of
        // fewer files does not replace the merged summary of all four.
        var aggregator = TraceAggregator()
        aggregator.read(TraceFileReader(path: traces.paths[2]))
        var recent = TraceFilter()
        recent.since = aggregator.summary().firstEvent
        let cut = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: recent, cache: cut).summarize(paths: paths))
            == Self.json(TraceSummarizer(filter: recent).summarize(paths: paths)))
        #expect(cut.statistics.mergedHits == 0)
        let after = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: after).summarize(paths: paths)) == uncached)
        #expect(after.statistics.mergedHits == 4)

        // One file changed: the merged summary no longer applies; that file is read, the others come from their entries.
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 7), timespec(tv_sec: 1_700_000_000, tv_nsec: 7)]
        #expect(utimensat(AT_FDCWD, traces.paths[1], &times, 0) == 0)
        let changed = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: changed).summarize(paths: paths)) == uncached)
        #expect(changed.statistics.mergedHits == 0 && changed.statistics.hits == 3 && changed.statistics.misses == 1)
        // That run kept the merge of all four again, used whole from then on.
        let again = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: again).summarize(paths: paths)) == uncached)
        #expect(again.statistics.hits == 4 && again.statistics.mergedHits == 4 && again.statistics.misses == 0)
        // A file deleted: the merged summary covers a file that is not there; the entries serve the rest.
        try FileManager.default.removeItem(atPath: traces.paths[0])
        let fewer = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: fewer).summarize(paths: paths)) == Self.json(TraceSummarizer().summarize(paths: paths)))
        #expect(fewer.statistics.mergedHits == 0 && fewer.statistics.hits == 3)
        // The deleted file's entry is gone from the store.
        #expect(try Self.stored(folder.path)[traces.paths[0]] == nil)
    }

    @Test("files of the packs layout in the cache folder are never read and are removed by a run that stores")
    func legacyFiles() throws {
        let traces = try GeneratedTraces(events: 4000, files: 3, seed: 34)
        let folder = TemporaryDirectory()
        let legacy = ["00000000deadbeef.summary", "0000018b1c2d3e4f-12-34.pack", ".0000018b1c2d3e4f-12-34.pack.ab12.tmp"].map { folder.path + "/" + $0 }
        for path in legacy { try Data("ATSP\u{1}\0\0\0 an old pack".utf8).write(to: URL(fileURLWithPath: path)) }
        let uncached = TraceSummarizer().summarize(paths: [traces.folder.path])
        let cache = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: cache).summarize(paths: [traces.folder.path])) == Self.json(uncached))
        #expect(cache.statistics.stored == 2)
        for path in legacy { #expect(!FileManager.default.fileExists(atPath: path), "\(path)") }
    }

    @Test("a cache folder that also holds a user's own .pack and .summary files: only the earlier layouts' names are removed")
    func legacyNamesOnly() throws {
        let traces = try GeneratedTraces(events: 2000, files: 2, seed: 35)
        let folder = TemporaryDirectory()
        let theirs = ["notes.pack", "2026.summary", "00000000deadbeef-x-1.pack", "0000018b1c2d3e4f-12-34.pack.bak", ".hidden.pack.tmp", "00000000DEADBEEF.summary"]
        for name in theirs { try Data("a user's file".utf8).write(to: URL(fileURLWithPath: folder.file(name))) }
        let cache = TraceSummaryCache(directory: folder.path)
        _ = TraceSummarizer(cache: cache).summarize(paths: [traces.folder.path])
        #expect(cache.statistics.stored > 0)
        for name in theirs { #expect(FileManager.default.fileExists(atPath: folder.file(name)), "\(name) was removed") }
    }

    /// A store whose layout is valid but one section's bytes are changed (the store has no checksum
    /// of its own: the section's is what catches it).
    static func damaging(_ folder: String, key: String, section: String, _ change: (inout [UInt8]) -> Void) throws {
        var entries = try stored(folder)
        var entry = try #require(entries[key])
        var bytes = try #require(entry.sections[section])
        change(&bytes)
        entry.sections[section] = bytes
        entries[key] = entry
        try Data(FileCacheStore.encodeAll(entries, client: TraceSummaryCache.client)).write(to: URL(fileURLWithPath: folder + "/" + TraceSummaryCache.fileName))
    }

    @Test("a damaged or forged section is ignored with a warning naming the cache; the report is unchanged and the section rebuilt")
    func damagedSections() throws {
        let traces = try GeneratedTraces(events: 6000, files: 4, seed: 35)
        let folder = TemporaryDirectory()
        let paths = [traces.folder.path]
        let uncached = Self.json(TraceSummarizer().summarize(paths: paths))
        // An app-version filter reads the files' entries (not the merged summary).
        var since = TraceFilter()
        since.appVersion = "2.3.0"
        let uncachedSince = Self.json(TraceSummarizer(filter: since).summarize(paths: paths))
        _ = TraceSummarizer(cache: TraceSummaryCache(directory: folder.path)).summarize(paths: paths)
        let cacheFile = folder.path + "/" + TraceSummaryCache.fileName
        let victim = traces.paths[1]
        let section = TraceSummaryCache.section(granularity: 1)

        // 1. One bit flipped inside a file's summary: a run that needs the entry finds it damaged, reads the file.
        try Self.damaging(folder.path, key: victim, section: section) { $0[$0.count / 2] ^= 0x40 }
        let flipped = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: since, cache: flipped).summarize(paths: paths)) == uncachedSince)
        #expect(flipped.statistics.misses == 1 && flipped.statistics.hits == 2)
        #expect(flipped.problems.count == 1 && flipped.problems[0].contains(cacheFile) && flipped.problems[0].contains(victim), "\(flipped.problems)")
        // It stored the file again: the next run finds every entry whole, and says nothing.
        let repaired = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: since, cache: repaired).summarize(paths: paths)) == uncachedSince)
        #expect(repaired.statistics.hits == 3 && repaired.problems.isEmpty)

        // 2. A forger who recomputes the checksum, with a count of 2^32 - 1 items: refused before anything is reserved.
        try Self.damaging(folder.path, key: victim, section: section) { bytes in
            bytes.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
            let sum = bytes.withUnsafeBytes { TraceSummaryCache.checksum(UnsafeRawBufferPointer(rebasing: $0[TraceSummaryCache.prefixBytes...])) }
            withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
            withUnsafeBytes(of: UInt64(bytes.count - TraceSummaryCache.prefixBytes).littleEndian) { bytes.replaceSubrange(16..<24, with: $0) }
        }
        let forged = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: since, cache: forged).summarize(paths: paths)) == uncachedSince)
        #expect(forged.statistics.misses == 1 && forged.problems.count == 1)

        // 3. The merged summary damaged: the unfiltered run takes the entries instead, and says so.
        try Self.damaging(folder.path, key: TraceSummaryCache.mergedKey, section: TraceSummaryCache.mergedSection) { $0[$0.count - 3] ^= 0x01 }
        let merged = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: merged).summarize(paths: paths)) == uncached)
        #expect(merged.statistics.mergedHits == 0 && merged.statistics.hits == 3)
        #expect(merged.problems.count == 1 && merged.problems[0].contains(cacheFile) && merged.problems[0].contains("merged"), "\(merged.problems)")
        // The run made it anew.
        let next = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: next).summarize(paths: paths)) == uncached)
        #expect(next.statistics.mergedHits == 3 && next.problems.isEmpty)

        // 4. The store's own layout cut short: the whole store is ignored, with a warning naming it.
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: cacheFile)))
        try Data(whole.prefix(whole.count - 5)).write(to: URL(fileURLWithPath: cacheFile))
        let cut = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: cut).summarize(paths: paths)) == uncached)
        #expect(cut.statistics.misses == 3 && cut.problems.count == 1 && cut.problems[0].contains(cacheFile))
    }

    @Test("thousands of random changes to the store file are refused or bounded, never a trap, and the report is unchanged")
    func hostileStore() throws {
        let traces = try GeneratedTraces(events: 3000, files: 3, seed: 37)
        let folder = TemporaryDirectory()
        let paths = [traces.folder.path]
        let uncached = Self.json(TraceSummarizer().summarize(paths: paths))
        _ = TraceSummarizer(cache: TraceSummaryCache(directory: folder.path)).summarize(paths: paths)
        let cacheFile = folder.path + "/" + TraceSummaryCache.fileName
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: cacheFile)))
        var generator = SplitMix64(seed: 12)
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = [0x00, 0xFF, 0x7F, 0x80, UInt8.random(in: 0...255, using: &generator)][Int.random(in: 0..<5, using: &generator)]
            }
            try Data(bytes).write(to: URL(fileURLWithPath: cacheFile))
            // Read only: the next round starts from the same damaged-once file.
            let cache = TraceSummaryCache(directory: folder.path)
            for path in traces.paths {
                if let status = FileStatus(path: path), let entry = cache.entry(absolutePath: path, path: path, status: status, granularity: 1) {
                    var total = TraceSummary()
                    total.merge(entry.summary)
                    _ = Self.json(total)
                }
            }
            let run = TraceSummaryCache(directory: folder.path)
            let files = traces.paths.compactMap { path in FileStatus(path: path).map { TraceSummaryCache.RunFile(path: path, absolutePath: path, status: $0) } }
            for summary in run.mergedSummaries(of: files, granularity: 1).summaries { _ = Self.json(summary) }
        }
        try Data(original.prefix(original.count / 3)).write(to: URL(fileURLWithPath: cacheFile))
        #expect(Self.json(TraceSummarizer(cache: TraceSummaryCache(directory: folder.path)).summarize(paths: paths)) == uncached)
    }
}

/// A collector's open file (appended gzip members under `<start>-<producer>-open.jsonl.gz`) in the
/// summary cache.
@Suite("TraceSummaryCache and a collector's open file")
struct TraceSummaryCacheOpenFileTests {
    static let header = #"{"type":"header","format":"apitrace","version":1,"producer":"dev1","app":"Otec","app_version":"2.1","started":"2026-11-22T10:00:00.000Z"}"#

    /// One gzip member: the header, then `count` requests from second `from` (every fifth a 503).
    static func member(from: Int, count: Int, status: Int = 200) throws -> [UInt8] {
        let lines = [header] + (from..<(from + count)).map { i in
            #"{"type":"request","ts":"2026-11-22T10:\#(String(format: "%02d", i / 60 % 60)):\#(String(format: "%02d", i % 60)).000Z","method":"GET","route":"/apps/{id}","status":\#(i % 5 == 0 ? 503 : status),"duration_ms":\#(10 + i % 90)}"#
        }
        return try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8), level: 5)
    }

    static func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    @Test("an unchanged open file is served from the cache; appended, rewritten or replaced, it is read again, and the report is the uncached one")
    func openFile() throws {
        let traces = TemporaryDirectory()
        let folder = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: traces.path + "/dt=2026-11-22", withIntermediateDirectories: true)
        let path = traces.path + "/dt=2026-11-22/20261122T100000Z-dev1-open.jsonl.gz"
        try Data(try Self.member(from: 0, count: 300)).write(to: URL(fileURLWithPath: path))
        try Self.append(try Self.member(from: 300, count: 200), to: path)
        let paths = [traces.path]
        func run() -> (json: String, statistics: TraceSummaryCache.Statistics, requests: Int) {
            let cache = TraceSummaryCache(directory: folder.path)
            let summary = TraceSummarizer(cache: cache).summarize(paths: paths)
            #expect(cache.problems.isEmpty, "\(cache.problems)")
            return (TraceSummaryCacheStoreTests.json(summary), cache.statistics, summary.requests.requests)
        }
        let uncached = { TraceSummaryCacheStoreTests.json(TraceSummarizer().summarize(paths: paths)) }

        let cold = run()
        #expect(cold.json == uncached() && cold.statistics.misses == 1 && cold.statistics.stored == 1 && cold.requests == 500)
        let warm = run()
        #expect(warm.json == uncached() && warm.statistics.hits == 1 && warm.statistics.misses == 0 && warm.requests == 500)

        // A member appended: read again, the new requests counted once.
        try Self.append(try Self.member(from: 500, count: 100), to: path)
        let grown = run()
        #expect(grown.json == uncached() && grown.statistics.misses == 1 && grown.requests == 600)
        #expect(run().statistics.hits == 1)

        // Rewritten in place at the same size (the last member's statuses changed): read again.
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let size = try Self.member(from: 500, count: 100).count
        // Another status whose member compresses to the same size.
        var same: [UInt8]?
        for status in 201...299 where same == nil {
            let member = try Self.member(from: 500, count: 100, status: status)
            if member.count == size { same = member }
        }
        let last = try #require(same)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(bytes.count - last.count))
        try handle.write(contentsOf: Data(last))
        try handle.close()
        let rewritten = run()
        #expect(rewritten.json == uncached() && rewritten.statistics.misses == 1)

        // Another file renamed in under the name, cut back to the first member.
        let other = traces.path + "/other.tmp"
        try Data(try Self.member(from: 0, count: 300)).write(to: URL(fileURLWithPath: other))
        #expect(rename(other, path) == 0)
        let replaced = run()
        #expect(replaced.json == uncached() && replaced.statistics.misses == 1 && replaced.requests == 300)
    }
}
