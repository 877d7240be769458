import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// One answer on a header's `version` (`HeaderCheck.problem(version:)`): every reader and the
/// collector accept 1 to the current version and refuse the rest. The collector's side runs in
/// APITraceCollectionTests ("the collector and the readers give one answer on a header's version").
@Suite("HeaderCheck")
struct HeaderCheckTests {
    @Test("versions start at 1: below is refused, above the current one is newer", arguments: [Int.min, -3, 0, 1, 2, 99, Int.max])
    func oneAnswer(version: Int) {
        let problem = HeaderCheck.problem(version: version)
        if version < 1 {
            #expect(problem == .beforeFirst(version))
            #expect(problem?.reason.contains("versions start at 1") == true)
        } else if version > TraceFileHeader.currentVersion {
            #expect(problem == .newer(version))
        } else {
            #expect(problem == nil)
        }
    }

    @Test("a reader skips a file whose header is version 0 or below, naming the file and the field", arguments: [0, -3])
    func readerRefusesVersionZero(version: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.file("v\(version).jsonl.gz")
        let event = TraceEvent(timestamp: TraceFiles.day, .request(.init(method: "GET", route: "/apps", status: 200, durationMs: 1)))
        try Data(TraceFiles.make(producer: "old", events: [event], version: version)).write(to: URL(fileURLWithPath: path))
        var read: [TraceEvent] = []
        let result = TraceFileReader(path: path).forEachEvent { read.append($0) }
        #expect(read.isEmpty)
        #expect(!result.isUsable)
        let warning = try #require(result.warnings.first)
        #expect(warning.kind == .notATraceFile("header field \"version\" is \(version); versions start at 1"))
        #expect(warning.description.contains(path))
    }
}
