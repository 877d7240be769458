import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("File pruning of report --since")
struct FilePruningTests {
    @Test("--since 2h opens no file that can only hold older events, and loses no event in range")
    func sinceTwoHours() throws {
        let folder = TemporaryDirectory()
        let now = TraceTimestamp.now().millisecondsSince1970
        let hour: Int64 = 3_600_000
        // One producer's hourly files from 10 h ago, then one started 20 minutes ago (still growing).
        let starts = (1...10).reversed().map { now - Int64($0) * hour } + [now - 20 * 60_000]
        var expected = 0
        var older: [String] = []
        for (i, start) in starts.enumerated() {
            let name = TraceFileIdentity(started: .init(millisecondsSince1970: start - start % 1000), producer: "prune1", sequence: i + 1).fileName
            let path = folder.file(name)
            let end = i + 1 < starts.count ? starts[i + 1] : now
            if end + TraceFileSelection.slack < now - 2 * hour {
                // Can only hold events older than the window: not a trace file at all, so opening it would warn.
                try Data("not gzip, must not be opened\n".utf8).write(to: URL(fileURLWithPath: path))
                older.append(path)
                continue
            }
            var lines = [TraceFileHeader(producer: "prune1", started: .init(millisecondsSince1970: start)).jsonLine]
            var t = start
            while t < end {
                let event = TraceEvent(timestamp: .init(millisecondsSince1970: t), .request(.init(method: "GET", route: "/a", status: 200, durationMs: 5)))
                lines.append(event.jsonLine)
                if t >= now - 2 * hour { expected += 1 }
                t += 60_000
            }
            let gz = try GzipDeflater.compress(Array(lines.map { $0 + "\n" }.joined().utf8))
            try Data(gz).write(to: URL(fileURLWithPath: path))
        }
        #expect(older.count == 7)

        let opened = Counter()
        let filter = try TraceFilter(since: "2h", now: .init(millisecondsSince1970: now))
        let summary = TraceSummarizer(filter: filter).summarize(paths: [folder.path]) { _, total in opened.set(total) }
        #expect(opened.value == starts.count - older.count)
        #expect(summary.filesFiltered == older.count)
        #expect(summary.filesUnusable == 0)
        #expect(summary.warnings.isEmpty, "\(summary.warnings)")
        #expect(summary.requests.requests == expected)

        // The same folder without --since opens every file, the older ones warning: the check can fail.
        let all = TraceSummarizer().summarize(paths: [folder.path])
        #expect(all.filesUnusable == older.count)
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = 0
    func set(_ n: Int) { lock.lock(); stored = n; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return stored }
}
