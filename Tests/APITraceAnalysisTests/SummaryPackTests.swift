@testable import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import APITraceSynthetic
import Foundation
import Testing

/// The summary cache's pack files: one per run that stored entries, readable by every later run
/// while other runs write theirs, merged when they pile up, ignored whole or entry by entry when damaged.
@Suite("TraceSummaryCache packs")
struct SummaryPackTests {
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
        cache.store(entry(path), absolutePath: path, path: path, status: try #require(FileStatus(path: path)), granularity: 1)
    }

    static func hit(_ cache: TraceSummaryCache, _ path: String) throws -> Bool {
        cache.entry(absolutePath: path, path: path, status: try #require(FileStatus(path: path)), granularity: 1) != nil
    }

    static func packs(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".pack") }.sorted()
    }

    @Test("two runs writing at once each leave a whole pack; a later run is served from both")
    func interleavedRuns() throws {
        let traces = try GeneratedTraces(events: 6000, files: 4, seed: 31)
        let folder = TemporaryDirectory()
        let a = TraceSummaryCache(directory: folder.path), b = TraceSummaryCache(directory: folder.path)
        // A starts its pack, B writes and publishes its own while A's is still open, then A ends.
        try Self.store(a, traces.paths[0])
        try Self.store(b, traces.paths[1])
        try Self.store(b, traces.paths[2])
        b.finish()
        try Self.store(a, traces.paths[2])
        try Self.store(a, traces.paths[3])
        a.finish()
        #expect(Self.packs(folder.path).count == 2)
        #expect(a.statistics.stored == 3 && b.statistics.stored == 2)
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { $0.hasSuffix(".pack") })
        let later = TraceSummaryCache(directory: folder.path)
        for path in traces.paths { #expect(try Self.hit(later, path), "\(path)") }
        #expect(later.statistics.hits == 4 && later.statistics.misses == 0)
        let contents = later.contents()
        #expect(contents.packs == 2 && contents.entries == 5)
    }

    @Test("an entry is served only while its file is unchanged, whichever pack holds it")
    func staleEntryInNewerPack() throws {
        let traces = try GeneratedTraces(events: 3000, files: 2, seed: 32)
        let folder = TemporaryDirectory()
        let path = traces.paths[0]
        let first = TraceSummaryCache(directory: folder.path)
        try Self.store(first, path)
        first.finish()
        // A newer pack holds an entry stored under another status of the same file: the older, matching one is served.
        let second = TraceSummaryCache(directory: folder.path)
        var status = try #require(FileStatus(path: path))
        status.modifiedNanoseconds += 1
        second.store(Self.entry(path), absolutePath: path, path: path, status: status, granularity: 1)
        second.finish()
        #expect(Self.packs(folder.path).count == 2)
        #expect(try Self.hit(TraceSummaryCache(directory: folder.path), path))
        // Touching the file makes both entries stale.
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 5), timespec(tv_sec: 1_700_000_000, tv_nsec: 5)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try !Self.hit(TraceSummaryCache(directory: folder.path), path))
    }

    @Test("an unfiltered run keeps the merge of its entries; the next uses it while every file is unchanged, otherwise the entries")
    func mergedSummary() throws {
        let traces = try GeneratedTraces(events: 8000, files: 5, seed: 36)
        let folder = TemporaryDirectory()
        let paths = [traces.folder.path]
        let cold = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: cold).summarize(paths: paths)) == Self.json(TraceSummarizer().summarize(paths: paths)))
        #expect(cold.statistics.stored == 4)
        let pack = try #require(Self.packs(folder.path).first.flatMap { SummaryPack.Opened(path: folder.path + "/" + $0) })
        #expect(pack.merged != nil && pack.records.count == 4)

        let warm = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: warm).summarize(paths: paths)) == Self.json(TraceSummarizer().summarize(paths: paths)))
        #expect(warm.statistics.hits == 4 && warm.statistics.mergedHits == 4 && warm.statistics.stored == 0)

        // A filtered run uses the entries, and the pack it writes has no merged summary.
        var filter = TraceFilter()
        filter.since = TraceTimestamp(millisecondsSince1970: 0)
        let filtered = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(filter: filter, cache: filtered).summarize(paths: paths))
            == Self.json(TraceSummarizer(filter: filter).summarize(paths: paths)))
        #expect(filtered.statistics.hits == 4 && filtered.statistics.mergedHits == 0)

        // One file changed: the pack no longer applies whole; that file is read, the others come from their entries.
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 7), timespec(tv_sec: 1_700_000_000, tv_nsec: 7)]
        #expect(utimensat(AT_FDCWD, traces.paths[1], &times, 0) == 0)
        let changed = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: changed).summarize(paths: paths)) == Self.json(TraceSummarizer().summarize(paths: paths)))
        #expect(changed.statistics.mergedHits == 0 && changed.statistics.hits == 3 && changed.statistics.misses == 1)
        // Its pack holds the one file re-read, with its own merged summary, used from then on with the entries of the first.
        let again = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: again).summarize(paths: paths)) == Self.json(TraceSummarizer().summarize(paths: paths)))
        #expect(again.statistics.hits == 4 && again.statistics.mergedHits == 1)
    }

    @Test("past the most packs kept, a run merges them into one holding each file's newest entry")
    func compaction() throws {
        let traces = try GeneratedTraces(events: 6000, files: 4, seed: 33)
        let folder = TemporaryDirectory()
        for run in 0...TraceSummaryCache.maximumPacks {
            let cache = TraceSummaryCache(directory: folder.path)
            try Self.store(cache, traces.paths[run % 4])
            cache.finish()
            #expect(Self.packs(folder.path).count == (run < TraceSummaryCache.maximumPacks ? run + 1 : 1))
        }
        let cache = TraceSummaryCache(directory: folder.path)
        #expect(cache.contents().packs == 1 && cache.contents().entries == 4)
        let merged = try #require(Self.packs(folder.path).first.flatMap { SummaryPack.Opened(path: folder.path + "/" + $0) })
        #expect(merged.merged != nil)
        for path in traces.paths { #expect(try Self.hit(cache, path)) }
        // And the report read through the merged pack is the uncached one.
        let uncached = TraceSummarizer().summarize(files: traces.paths)
        #expect(Self.json(TraceSummarizer(cache: TraceSummaryCache(directory: folder.path)).summarize(files: traces.paths)) == Self.json(uncached))
    }

    @Test("entries of the old one-file-per-entry format are never read and are removed by a run that stores")
    func legacyEntries() throws {
        let traces = try GeneratedTraces(events: 4000, files: 3, seed: 34)
        let folder = TemporaryDirectory()
        let legacy = folder.path + "/00000000deadbeef.summary"
        try Data("ATSC\u{1}\0\0\0 not a version-2 entry".utf8).write(to: URL(fileURLWithPath: legacy))
        let uncached = TraceSummarizer().summarize(paths: [traces.folder.path])
        let cache = TraceSummaryCache(directory: folder.path)
        #expect(Self.json(TraceSummarizer(cache: cache).summarize(paths: [traces.folder.path])) == Self.json(uncached))
        #expect(cache.statistics.stored == 2)
        #expect(!FileManager.default.fileExists(atPath: legacy))
    }

    @Test("a truncated, bit-flipped or forged pack is ignored whole or entry by entry, never a trap, and the report is unchanged")
    func damagedPacks() throws {
        let traces = try GeneratedTraces(events: 6000, files: 4, seed: 35)
        let folder = TemporaryDirectory()
        let uncached = Self.json(TraceSummarizer().summarize(paths: [traces.folder.path]))
        _ = TraceSummarizer(cache: TraceSummaryCache(directory: folder.path)).summarize(paths: [traces.folder.path])
        let name = try #require(Self.packs(folder.path).first)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/" + name)))
        let scratch = TemporaryDirectory()
        let path = scratch.path + "/" + name

        func open(_ bytes: [UInt8]) throws -> SummaryPack.Opened? {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return SummaryPack.Opened(path: path)
        }
        // The intact pack indexes every cacheable file.
        #expect(try open(original)?.records.count == 3)
        // Every truncation loses the footer: the whole pack is ignored.
        for length in stride(from: 0, to: original.count, by: max(1, original.count / 500)) {
            #expect(try open(Array(original.prefix(length))) == nil)
        }
        // Random damage, then a forger who recomputes the index checksum so the index itself is trusted.
        var generator = SplitMix64(seed: 12)
        let footer = original.count - SummaryPack.footerBytes
        let indexOffset = Int(original.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: footer + 16, as: UInt64.self) })
        for round in 0..<600 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = round % 2 == 0 ? Int.random(in: 0..<bytes.count, using: &generator) : Int.random(in: indexOffset..<footer, using: &generator)
                bytes[at] = [0x00, 0xFF, 0x7F, 0x80, UInt8.random(in: 0...255, using: &generator)][Int.random(in: 0..<5, using: &generator)]
            }
            if round % 2 == 1 {
                // The checksum covers the index, then the merged summary's offset and length (the footer's first 16 bytes).
                let covered = Array(bytes[indexOffset..<footer]) + Array(bytes[footer..<(footer + 16)])
                let sum = covered.withUnsafeBytes { TraceSummaryCache.checksum($0) }
                withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange((footer + 32)..<(footer + 40), with: $0) }
            }
            guard let pack = try open(bytes) else { continue }
            if let merged = pack.readMerged(), let summary = merged.withUnsafeBytes({ TraceSummaryCache.decodeMerged($0) }) {
                var total = TraceSummary()
                total.merge(summary)
                _ = Self.json(total)
            }
            for record in pack.records {
                // Whatever the index says, a record lies inside the pack and reads back whole or not at all.
                #expect(record.offset >= Int64(SummaryPack.headerBytes) && record.offset + Int64(record.length) <= Int64(indexOffset))
                for file in traces.paths {
                    if let bytes = pack.read(record), let entry = TraceSummaryCache.decode(
                        bytes, absolutePath: file, status: try #require(FileStatus(path: file)), granularity: 1) {
                        var total = TraceSummary()
                        total.merge(entry.summary)
                        _ = Self.json(total)
                    }
                }
            }
        }
        // Through the summarizer: a damaged pack in the folder changes nothing in the report.
        let merged = try #require(try open(original)?.merged)
        var since = TraceFilter()
        since.since = TraceTimestamp(millisecondsSince1970: 0)
        let uncachedSince = Self.json(TraceSummarizer(filter: since).summarize(paths: [traces.folder.path]))
        for damage in 0..<4 {
            var bytes = original
            switch damage {
            case 0: bytes = Array(bytes.prefix(bytes.count - 7))
            case 1: bytes[footer + 36] ^= 0x01
            case 2: bytes[SummaryPack.headerBytes + 100] ^= 0x40
            default: bytes[Int(merged.offset) + merged.length / 2] ^= 0x40
            }
            try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/" + name))
            let cache = TraceSummaryCache(directory: folder.path)
            #expect(Self.json(TraceSummarizer(cache: cache).summarize(paths: [traces.folder.path])) == uncached)
            switch damage {
            case 0, 1: #expect(cache.statistics.misses == 3, "the whole pack is ignored")
            case 2:
                // The merged summary stands in for the damaged entry; a filtered run needs the entry, finds it damaged, reads the file.
                #expect(cache.statistics.mergedHits == 3)
                for other in Self.packs(folder.path) where other != name { unlink(folder.path + "/" + other) }
                let filtered = TraceSummaryCache(directory: folder.path)
                #expect(Self.json(TraceSummarizer(filter: since, cache: filtered).summarize(paths: [traces.folder.path])) == uncachedSince)
                #expect(filtered.statistics.misses == 1 && filtered.statistics.hits == 2)
            default: #expect(cache.statistics.mergedHits == 0 && cache.statistics.hits == 3, "a damaged merged summary: the entries")
            }
            for other in Self.packs(folder.path) where other != name { unlink(folder.path + "/" + other) }
        }
    }

    @Test("offsets forged near 2^64 in the footer or the index are refused, not added up into a trap")
    func offsetsNearTheTop() throws {
        let traces = try GeneratedTraces(events: 3000, files: 3, seed: 36)
        let folder = TemporaryDirectory()
        _ = TraceSummarizer(cache: TraceSummaryCache(directory: folder.path)).summarize(paths: [traces.folder.path])
        let name = try #require(Self.packs(folder.path).first)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/" + name)))
        let footer = original.count - SummaryPack.footerBytes
        let indexOffset = Int(original.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: footer + 16, as: UInt64.self) })
        let scratch = TemporaryDirectory()
        let path = scratch.path + "/" + name
        func put(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) }
        }
        /// Recomputes the footer's checksum (index, then the merged summary's offset and length), as a forger would.
        func resealed(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            let covered = Array(bytes[indexOffset..<footer]) + Array(bytes[footer..<(footer + 16)])
            put(covered.withUnsafeBytes { TraceSummaryCache.checksum($0) }, at: footer + 32, in: &bytes)
            return bytes
        }
        let top = UInt64.max - 3
        var forgedIndex = original
        put(top, at: footer + 16, in: &forgedIndex)
        var forgedMerged = original
        put(top, at: footer, in: &forgedMerged)
        put(UInt64(TraceSummaryCache.prefixBytes), at: footer + 8, in: &forgedMerged)
        var forgedRecord = original
        put(top, at: indexOffset + 8, in: &forgedRecord)
        for (what, bytes) in [("index offset", forgedIndex), ("merged offset", resealed(forgedMerged)), ("record offset", resealed(forgedRecord))] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(SummaryPack.Opened(path: path) == nil, "\(what)")
        }
    }
}
