import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// File selection decides what every cron run of `apitrace alert` (and every `--since` report)
/// reads: it may skip a file only when the file's name proves it holds no event of the range.
@Suite struct TraceFileSelectionTests {
    static let t0: Int64 = 1_795_305_600_000  // 2026-11-22T00:00:00Z
    static let hour: Int64 = 3_600_000

    struct Written {
        var path: String
        var first: Int64
        var last: Int64
    }

    /// Producer `a` rotates hourly, `b` every 90 minutes with its sequence numbers; each file's
    /// events run from its start to a minute before the next one starts. The last file of each
    /// producer is still being written (modified "now"), except where a test changes it.
    func folder(_ dir: String) throws -> [Written] {
        var written: [Written] = []
        for (producer, every, count) in [("a", Self.hour, 12), ("b", 3 * Self.hour / 2, 8)] {
            for k in 0..<count {
                let start = Self.t0 + Int64(k) * every
                let last = start + every - 60_000
                let path = dir + "/" + TraceFileIdentity(started: .init(millisecondsSince1970: start), producer: producer, sequence: k + 1).fileName
                let text = TraceFileHeader(producer: producer, started: .init(millisecondsSince1970: start)).jsonLine + "\n"
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
                try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(last) / 1000)], ofItemAtPath: path)
                written.append(Written(path: path, first: start, last: last))
            }
        }
        return written
    }

    @Test func noFileThatCanHoldEventsOfTheRangeIsSkipped() throws {
        let dir = TemporaryDirectory()
        let written = try folder(dir.path)
        let files = written.map(\.path).shuffled()
        for (from, to) in [(0, 1), (5, 6), (2.5, 7.25), (11.5, 12), (-3, 0.5), (11.9, 40), (20, 30)] as [(Double, Double)] {
            let range = (Self.t0 + Int64(from * Double(Self.hour)))..<(Self.t0 + Int64(to * Double(Self.hour)))
            let selected = Set(TraceFileSelection.select(files, overlapping: [range]))
            for w in written {
                let holds = w.first < range.upperBound && range.lowerBound <= w.last
                if holds { #expect(selected.contains(w.path), "\(from)..<\(to) h skipped \(w.path)") }
                // A file whose span (to the next file's start, two minutes of slack) misses the range is not opened.
                if w.first >= range.upperBound + TraceFileSelection.slack || w.last + 60_000 + TraceFileSelection.slack < range.lowerBound {
                    #expect(!selected.contains(w.path), "\(from)..<\(to) h opened \(w.path)")
                }
            }
        }
    }

    @Test func finishedFilesAreThoseWithASuccessor() throws {
        let dir = TemporaryDirectory()
        let written = try folder(dir.path)
        let plan = TraceFileSelection.plan(written.map(\.path), overlapping: [.min..<(.max)])
        #expect(plan.count == written.count)
        let lastOfEach = Set([written[11].path, written[19].path])
        for file in plan {
            #expect((file.finishedSpan == nil) == lastOfEach.contains(file.path), "\(file.path)")
            if let span = file.finishedSpan, let w = written.first(where: { $0.path == file.path }) {
                #expect(span.contains(w.first) && span.contains(w.last))
            }
        }
    }

    @Test func aLastFileIsBoundedByItsModificationTimeUnlessTheClockIsSkewed() throws {
        let dir = TemporaryDirectory()
        let written = try folder(dir.path)
        let last = written[11]  // a's last file: 11:00 to 11:59, modified at 11:59
        let afterIt = (last.last + 10 * 60_000)..<(last.last + Self.hour)
        #expect(!TraceFileSelection.select([last.path], overlapping: [afterIt]).contains(last.path))
        // Modified before it started (a copied file, a skewed clock): it could hold anything later.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(Self.t0) / 1000 - 86_400)], ofItemAtPath: last.path)
        #expect(TraceFileSelection.select([last.path], overlapping: [afterIt]) == [last.path])
    }

    @Test func filesWithoutATraceNameAreAlwaysRead() throws {
        let dir = TemporaryDirectory()
        let odd = dir.path + "/exported-by-hand.jsonl.gz"
        try Data().write(to: URL(fileURLWithPath: odd))
        #expect(TraceFileSelection.select([odd], overlapping: [0..<1]) == [odd])
        #expect(TraceFileSelection.select([odd], since: .init(millisecondsSince1970: Self.t0), until: nil) == [odd])
    }

    @Test("a producer's last file is finished when it is read-only and no writer holds its lock, so a folder of single files is cached")
    func aReadOnlyUnlockedLastFileIsFinished() throws {
        let dir = TemporaryDirectory()
        let written = try folder(dir.path)
        let last = written[11]
        #expect(TraceFileSelection.plan([last.path]).first?.finishedSpan == nil, "writable: its writer may append")
        #expect(chmod(last.path, 0o400) == 0)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(last.last) / 1000)], ofItemAtPath: last.path)
        let span = try #require(TraceFileSelection.plan([last.path]).first?.finishedSpan, "read-only and unlocked: finished")
        #expect(span.contains(last.first) && span.contains(last.last))
        #expect(TraceFileSelection.plan([last.path]).first?.isCacheable == true)
        // Held by a writer's exclusive lock (a process still finishing it): not finished.
        let fd = open(last.path, O_RDONLY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        #expect(TraceFileSelection.plan([last.path]).first?.finishedSpan == nil)
    }

    @Test("collector files: sealed ones are finished with the span their names give, stored ones are finished, open ones are read and never cached")
    func collectorFiles() throws {
        let start = TraceTimestamp(millisecondsSince1970: Self.t0)
        let end = start.adding(milliseconds: Self.hour)
        let sealed = "/s/dt=2026-11-22/" + TraceFileIdentity(started: start, producer: "p", kind: .sealed(ended: end, tag: "0123abcd")).fileName
        let open = "/s/dt=2026-11-22/" + TraceFileIdentity(started: end, producer: "p", kind: .open).fileName
        let stored = "/s/dt=2026-11-22/" + TraceFileIdentity(started: start, producer: "q", kind: .stored(digest: "0123456789abcdef")).fileName
        let plan = Dictionary(TraceFileSelection.plan([sealed, open, stored]).map { ($0.path, $0) }) { a, _ in a }
        #expect(plan[sealed]?.isCacheable == true && plan[sealed]?.finishedSpan == (Self.t0 - Self.hour)..<(Self.t0 + 2 * Self.hour))
        #expect(plan[open]?.isCacheable == false)
        // A stored file alone has no known end: read, and not cached (its span is unknown).
        #expect(plan[stored] != nil && plan[stored]?.isCacheable == false)
        // Pruned by the sealed span (2 minutes of slack), not by the collector's clock.
        let after = (Self.t0 + Self.hour + 3 * 60_000)..<(Self.t0 + 2 * Self.hour)
        #expect(TraceFileSelection.select([sealed, open], overlapping: [after]) == [open])
        #expect(TraceFileSelection.select([sealed], overlapping: [(Self.t0 + Self.hour + 60_000)..<(Self.t0 + 2 * Self.hour)]) == [sealed])
        // A listing taken while the collector renamed the open file to its sealed name holds both: read once.
        let renamed = "/s/dt=2026-11-22/" + TraceFileIdentity(started: end, producer: "p", kind: .sealed(ended: end.adding(milliseconds: Self.hour), tag: "0123abcd")).fileName
        #expect(TraceFileSelection.select([sealed, open, renamed], overlapping: [.min..<(.max)]) == [sealed, renamed])
    }
}
