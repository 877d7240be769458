import APITraceTestSupport
import Foundation
import Testing

@Suite("apitrace generate")
struct GenerateCommandTests {
    @Test("apitrace generate writes files that report reads")
    func generate() async throws {
        let folder = TemporaryDirectory()
        let gen = try await apitrace(["generate", "--events", "300", "--files", "2", "--seed", "5", "--out", folder.path])
        #expect(gen.status == 0)
        #expect(gen.stdout.split(separator: "\n").count == 2)
        let report = try await apitrace(["report", folder.path])
        #expect(report.status == 0)
        #expect(report.stdout.contains("300 events"))
    }
}
