import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The export's read loop: files picked by time, events kept by the caller's filter, warnings named.
@Suite struct TraceExportReaderTests {
    let folder = TemporaryDirectory()
    var dir: String { folder.path }
    static let start = TraceTimestamp(rfc3339: "2026-11-22T09:00:00Z")!

    /// Three hourly files of one producer, 10 requests each, sessions a and b alternating.
    func hours() throws -> [String] {
        try (0..<3).map { h in
            let started = Self.start.adding(milliseconds: Int64(h) * 3_600_000)
            var text = TraceFileHeader(producer: "p", appVersion: "2.\(h)", started: started).jsonLine + "\n"
            for i in 0..<10 {
                text += TraceEvent(timestamp: started.adding(milliseconds: Int64(i) * 1000), session: i % 2 == 0 ? "a" : "b", .request(.init(
                    method: "GET", route: "/apps/{id}", host: "api.example.com", status: 200, durationMs: 5))).jsonLine + "\n"
            }
            let path = dir + "/" + TraceFileIdentity(started: started, producer: "p", sequence: h + 1).fileName
            try Data(try GzipDeflater.compress(Array(text.utf8), level: 5)).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    @Test func picksFilesByTimeAndKeepsTheCallersEvents() throws {
        _ = try hours()
        var har = HARExporter()
        let since = Self.start.adding(milliseconds: 2 * 3_600_000 + 1000)
        let read = TraceExportReader(since: since, keepEvent: { $0.session == "a" }).read([dir], into: &har)
        // The first hour ended when the second began: only the last two files can hold such events.
        #expect(read.usableFiles == 2 && read.warnings.isEmpty)
        let archive = try JSONSerialization.jsonObject(with: har.archive()) as? [String: Any]
        let entries = (archive?["log"] as? [String: Any])?["entries"] as? [Any]
        #expect(entries?.count == 10)
    }

    @Test func aCumulativeExportReadsEachFileOnceAndNamesDamagedOnes() throws {
        var files = try hours()
        let damaged = dir + "/" + TraceFileIdentity(started: Self.start.adding(milliseconds: 3 * 3_600_000), producer: "q", sequence: 1).fileName
        try Data("not gzip at all\n".utf8).write(to: URL(fileURLWithPath: damaged))
        files.append(damaged)
        var export = CumulativeExport(selection: "all")
        let first = TraceExportReader(keepFile: { $0.appVersion != "2.0" }).read(files, into: &export)
        #expect(first.usableFiles == 3)
        #expect(first.warnings.count == 1 && first.warnings[0].description.contains(damaged))
        #expect(export.metrics.text().contains(#"app_version="2.1""#) && !export.metrics.text().contains(#"app_version="2.0""#))
        let again = TraceExportReader().read(files, into: &export)
        #expect(again.usableFiles == 3)
        #expect(files.prefix(3).allSatisfy { export.countedEvents(in: $0) == 10 })
    }
}
