import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("Bad input is reported and the rest still counted")
struct BadInputTests {
    @Test("a missing path, a non-trace file, a truncated gzip and a newer version each warn; the good file is counted")
    func mixedFolder() throws {
        let traces = try GeneratedTraces(events: 2000, files: 2, seed: 4)
        let folder = traces.folder
        // A file that is not a trace.
        try "hello, not json\n".write(toFile: folder.file("notes.jsonl"), atomically: true, encoding: .utf8)
        // A newer format version.
        try writeGzip(#"{"type":"header","format":"apitrace","version":99,"producer":"x","started":"2026-11-22T08:00:00Z"}"# + "\n", to: folder.file("newer.jsonl.gz"))
        // The second generated file cut in the middle: its first events survive.
        let secondPath = traces.paths[1]
        let whole = try Data(contentsOf: URL(fileURLWithPath: secondPath))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: secondPath))
        let recovered = TraceFileReader(path: secondPath).forEachEvent { _ in }.events

        let summary = TraceSummarizer().summarize(paths: [folder.path, folder.file("missing-folder")])
        #expect(summary.filesRead == 2)
        #expect(summary.filesUnusable == 3)
        #expect(summary.events == traces.events[0].count + recovered)
        #expect(recovered > 0 && recovered < traces.events[1].count)
        let kinds = summary.warnings.map(\.kind)
        #expect(kinds.contains { if case .unreadable = $0 { return true }; return false })
        #expect(kinds.contains { if case .notATraceFile = $0 { return true }; return false })
        #expect(kinds.contains(.newerVersion(99)))
        let truncated = try #require(summary.warnings.first { $0.path == secondPath })
        #expect(truncated.eventsKept == recovered)
        #expect(truncated.description.contains("kept \(recovered) events"))

        let text = TraceReport(summary: summary).render(.text)
        #expect(text.contains("warning: "))
        #expect(text.contains("version 99"))
    }

    @Test("invalid lines are skipped with their line number and reason; valid lines around them count")
    func invalidLines() throws {
        let folder = TemporaryDirectory()
        let lines = [
            #"{"type":"header","format":"apitrace","version":1,"producer":"p","started":"2026-11-22T08:00:00Z"}"#,
            #"{"type":"request","ts":"2026-11-22T08:00:01Z","method":"GET","route":"/a","status":200,"duration_ms":5}"#,
            #"{"type":"request","ts":"2026-11-22T08:00:02Z","method":"GET","route":"/a","status":"ok","duration_ms":5}"#,
            #"{"type":"request","ts":"2026-11-22T08:00:03Z","method":"GET","duration_ms":5}"#,
            #"{"type":"span","ts":"2026-11-22T08:00:04Z"}"#,
            #"{"type":"request","ts":"2026-11-22T08:00:05Z","method":"GET","route":"/a","duration_ms":7,"error":"URLError.timedOut"}"#,
        ]
        try lines.joined(separator: "\n").appending("\n").write(toFile: folder.file("a.jsonl"), atomically: true, encoding: .utf8)
        let summary = TraceSummarizer().summarize(paths: [folder.path])
        #expect(summary.requests.requests == 2)
        #expect(summary.requests.transportErrors == 1)
        #expect(summary.invalidLines == 2)
        #expect(summary.unknownTypes == 1)
        #expect(summary.warnings.contains { $0.description.contains(":3: skipped invalid line: field \"status\" is not a number") })
        #expect(summary.warnings.contains { $0.description.contains(":4: skipped invalid line: missing field \"route\"") })
    }
}
