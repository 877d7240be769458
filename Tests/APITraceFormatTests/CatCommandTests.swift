import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

@Suite("apitrace cat")
struct CatCommandTests {
    @Test("prints the header and every event as JSON Lines, exit 0")
    func printsEvents() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, producer: "catp"))
        for event in everyEventType { writer.append(event) }
        writer.close()
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", dir.path])
        #expect(result.status == 0)
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == everyEventType.count + 1)
        #expect(lines.first?.contains(#""producer":"catp""#) == true)
        #expect(Array(lines.dropFirst()) == everyEventType.map(\.jsonLine))
        #expect(result.stderr.isEmpty)
    }

    @Test("a damaged file prints what it can, warns with the file and offset, exit 1")
    func damaged() async throws {
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path))
        for event in everyEventType { writer.append(event) }
        writer.close()
        let path = dir.traceFiles[0]
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 4).write(to: URL(fileURLWithPath: path))
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", "--no-headers", path])
        #expect(result.status == 1)
        #expect(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").count == everyEventType.count)
        let warning = String(decoding: result.stderr, as: UTF8.self)
        #expect(warning.contains(path) && warning.contains("truncated at byte"))
    }

    @Test("nothing readable: exit 2 with a message naming the path")
    func nothingReadable() async throws {
        let result = try await runOffPool(try builtProduct("apitrace").path, ["cat", "/nonexistent/x.jsonl.gz"])
        #expect(result.status == 2)
        #expect(String(decoding: result.stderr, as: UTF8.self).contains("/nonexistent/x.jsonl.gz"))
    }
}
