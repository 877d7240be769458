import APITraceTestSupport
import APITraceCollector
import Foundation
import Testing

/// The counters folder (`.collectors/<id>/`) is a file a careless tool or a hostile user can write:
/// extreme sequence and generation numbers must not trap the collector at start.
@Suite struct IngestCountLogHostileTests {
    @Test("a count log named and filled with Int.max: the collector starts (saturating, no overflow trap)")
    func extremeNumbers() throws {
        let store = TemporaryDirectory()
        let folder = store.path + "/.collectors/alpha"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let max = Int.max
        let lines = "T \(max) journal digest 0 0 file\nK \(max)\nT \(max - 1) journal digest 9223372036854775807 1 file\n"
        try Data(lines.utf8).write(to: URL(fileURLWithPath: folder + "/counts-\(max).log"))
        var configuration = TraceCollector.Configuration(directory: store.path, tokens: ["t"])
        configuration.instanceID = "alpha"
        let collector = try TraceCollector(configuration: configuration)
        #expect(collector.metrics.snapshot.duplicates == 0)
    }
}
