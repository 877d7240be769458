import APITraceFormat
import APITraceTestSupport
import APITraceSynthetic
import Foundation
import Testing

@Suite("Synthetic trace generator")
struct SyntheticTraceGeneratorTests {
    @Test("the same seed writes the same bytes; files read back as the generated events")
    func deterministicAndReadable() throws {
        let generator = SyntheticTraceGenerator(configuration: .init(events: 1500, files: 2, seed: 99))
        let first = TemporaryDirectory(), second = TemporaryDirectory()
        let a = try generator.write(to: first.path)
        let b = try SyntheticTraceGenerator(configuration: .init(events: 1500, files: 2, seed: 99)).write(to: second.path)
        for (x, y) in zip(a, b) {
            #expect(FileManager.default.contents(atPath: x) == FileManager.default.contents(atPath: y))
        }
        for (index, path) in a.enumerated() {
            var read: [TraceEvent] = []
            let result = TraceFileReader(path: path).forEachEvent { read.append($0) }
            #expect(result.warnings.isEmpty)
            #expect(result.header == generator.header(file: index))
            #expect(read == generator.events(file: index))
        }
        #expect((0..<2).map { generator.events(file: $0).count } == [750, 750])
    }

    @Test("traffic is realistic: every event type, statuses of every class, the missing stability key")
    func realistic() throws {
        let events = SyntheticTraceGenerator(configuration: .init(events: 5000, seed: 1)).events(file: 0)
        let types = Set(events.map(\.type))
        #expect(types == ["request", "decode_failure", "error", "sse", "log", "dropped"])
        var classes = Set<String>()
        for e in events {
            if case .request(let r) = e.payload { classes.insert(r.status.map { "\($0 / 100)xx" } ?? "transport") }
        }
        #expect(classes.isSuperset(of: ["2xx", "4xx", "5xx", "transport"]))
        #expect(events.contains {
            if case .decodeFailure(let d) = $0.payload { return d.path == "data.apps[3].stability" && d.kind == .keyNotFound }
            return false
        })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }
}
