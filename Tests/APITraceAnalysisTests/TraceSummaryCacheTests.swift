@testable import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import APITraceSynthetic
import Foundation
import Testing

/// The summary cache as a library: entries round-trip exactly, hostile entries are refused without
/// trapping or allocating past their size, the folder stays within its bound.
@Suite("TraceSummaryCache")
struct TraceSummaryCacheTests {
    /// A folder of one producer's finished files (all but the last are cacheable).
    static func traces() throws -> GeneratedTraces { try GeneratedTraces(events: 8000, files: 5, seed: 77) }

    static func json(_ summary: TraceSummary) -> String {
        TraceReport(summary: summary, options: .init(sources: ["x"], byAppVersion: true)).render(.json)
    }

    @Test("a second run serves every finished file from the cache and reports exactly what an uncached run does")
    func warmRun() throws {
        let traces = try Self.traces()
        let folder = TemporaryDirectory()
        let uncached = TraceSummarizer().summarize(paths: [traces.folder.path])
        let cold = TraceSummaryCache(directory: folder.path)
        let first = TraceSummarizer(cache: cold).summarize(paths: [traces.folder.path])
        #expect(cold.statistics.stored == 4 && cold.statistics.hits == 0 && cold.statistics.misses == 4)
        let warm = TraceSummaryCache(directory: folder.path)
        let second = TraceSummarizer(cache: warm).summarize(paths: [traces.folder.path])
        #expect(warm.statistics.hits == 4 && warm.statistics.stored == 0)
        #expect(Self.json(first) == Self.json(uncached))
        #expect(Self.json(second) == Self.json(uncached))
        // Counted independently from the generated events, not through the reader.
        #expect(second.events == traces.allEvents.count)
        let requests = traces.allEvents.filter { if case .request = $0.payload { true } else { false } }.count
        #expect(second.requests.requests == requests)
    }

    /// The bytes of one valid entry, with the status and path they were stored for.
    static func validEntry() throws -> (bytes: [UInt8], path: String, status: FileStatus, summary: TraceSummary) {
        let traces = try Self.traces()
        let path = traces.paths[0]
        var aggregator = TraceAggregator()
        aggregator.read(TraceFileReader(path: path))
        let summary = aggregator.summary()
        let status = try #require(FileStatus(path: path))
        let bytes = TraceSummaryCache.encode(.init(summary: summary, header: .some("2.3.0")), absolutePath: path, status: status, granularity: 1)
        return (bytes, path, status, summary)
    }

    @Test("an entry decodes to the same summary; a different size, time, inode or granularity is a miss")
    func roundTrip() throws {
        let (bytes, path, status, summary) = try Self.validEntry()
        let decoded = try #require(TraceSummaryCache.decode(bytes, absolutePath: path, status: status, granularity: 1))
        #expect(Self.json(decoded.summary) == Self.json(summary))
        #expect(decoded.header == .some("2.3.0"))
        var size = status, time = status, inode = status
        size.size += 1
        time.modifiedNanoseconds += 1
        inode.inode += 1
        for changed in [size, time, inode] {
            #expect(TraceSummaryCache.decode(bytes, absolutePath: path, status: changed, granularity: 1) == nil)
        }
        #expect(TraceSummaryCache.decode(bytes, absolutePath: path, status: status, granularity: 5) == nil)
        #expect(TraceSummaryCache.decode(bytes, absolutePath: path + "x", status: status, granularity: 1) == nil)
    }

    @Test("every truncation and thousands of forged mutations (checksum recomputed) are refused or bounded, never a trap")
    func hostileEntries() throws {
        let (bytes, path, status, _) = try Self.validEntry()
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 2000)) {
            #expect(TraceSummaryCache.decode(Array(bytes.prefix(length)), absolutePath: path, status: status, granularity: 1) == nil)
        }
        // A forger who recomputes the checksum: the decoder itself must hold.
        var generator = SplitMix64(seed: 9)
        let prefix = TraceSummaryCache.prefixBytes
        func forged(_ body: (inout [UInt8]) -> Void) -> [UInt8] {
            var copy = bytes
            body(&copy)
            let sum = copy.withUnsafeBytes { TraceSummaryCache.checksum(UnsafeRawBufferPointer(rebasing: $0[prefix...])) }
            withUnsafeBytes(of: sum.littleEndian) { copy.replaceSubrange(8..<16, with: $0) }
            withUnsafeBytes(of: UInt64(copy.count - prefix).littleEndian) { copy.replaceSubrange(16..<24, with: $0) }
            return copy
        }
        var accepted = 0
        for _ in 0..<3000 {
            let entry = forged { copy in
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let at = Int.random(in: prefix..<copy.count, using: &generator)
                    copy[at] = [0x00, 0xFF, 0x7F, 0x80, UInt8.random(in: 0...255, using: &generator)][Int.random(in: 0..<5, using: &generator)]
                }
            }
            if let decoded = TraceSummaryCache.decode(entry, absolutePath: path, status: status, granularity: 1) {
                accepted += 1
                // Whatever was accepted can be merged and rendered.
                var total = TraceSummary()
                total.merge(decoded.summary)
                total.merge(decoded.summary)
                _ = Self.json(total)
            }
        }
        #expect(accepted < 3000)
        // A count of 2^32 - 1 items in a small entry is refused before anything is reserved.
        let huge = forged { copy in
            copy.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(TraceSummaryCache.decode(huge, absolutePath: path, status: status, granularity: 1) == nil)
    }

    @Test("past its bound the cache removes its oldest entries and the report is unchanged")
    func eviction() throws {
        let traces = try GeneratedTraces(events: 20_000, files: 12, seed: 5)
        let folder = TemporaryDirectory()
        let uncached = TraceSummarizer().summarize(paths: [traces.folder.path])
        let bound: Int64 = 10_000
        let cache = TraceSummaryCache(directory: folder.path, maximumBytes: bound)
        let summary = TraceSummarizer(cache: cache).summarize(paths: [traces.folder.path])
        #expect(Self.json(summary) == Self.json(uncached))
        #expect(cache.statistics.stored == 11)
        #expect(cache.statistics.evicted > 0)
        let sizes = try FileManager.default.contentsOfDirectory(atPath: folder.path).map { FileStatus(path: folder.path + "/" + $0)!.size }
        #expect(sizes.reduce(0, +) <= bound)
    }
}
