import APITraceCapture
import APITraceTesting
import Foundation
import Testing

@Suite("Decode failures are rate limited per group, with counts of what was held back")
struct DecodeFailureRateLimitTests {
    struct Item: Decodable { var id: Int; var name: String }
    struct Page: Decodable { @LossyArray var items: [Item] }

    @Test("a bad 10,000-element page writes 10 decode failures, 10 log lines and one count of the rest")
    func bigBadPage() throws {
        let logs = LogCollector()
        let traces = TestTracer(configuration: .init(logging: logs.function(minimumLevel: .warning)))
        let tracer = traces.tracer
        let json = #"{"items":["# + Array(repeating: #"{"id":1}"#, count: 10_000).joined(separator: ",") + "]}"
        let page = try TracedJSONDecoder(tracer: tracer).decode(Page.self, from: Data(json.utf8), route: "/items")
        #expect(page.items.isEmpty)
        tracer.flush()
        let failures = traces.decodeFailures
        #expect(failures.count == 10)
        #expect(failures.allSatisfy { $0.entity == "Item" && $0.pathPattern == "items[*].name" })
        #expect(logs.records.count == 10)
        let dropped = traces.dropped
        #expect(dropped.map(\.reason) == [APITracer.decodeFailureDropReason])
        // Written plus held back is every failure there was.
        #expect(failures.count + dropped.map(\.count).reduce(0, +) == 10_000)
    }

    @Test("groups are limited separately, and nil writes every failure")
    func groups() throws {
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.decodeFailureRateLimit = RateLimit(maxEvents: 2, per: .seconds(3600))
        let traces = TestTracer(configuration: configuration)
        let tracer = traces.tracer
        for path in ["a", "b"] {
            for index in 0..<5 {
                tracer.recordDecodeFailure(.init(entity: "X", kind: .keyNotFound, path: "items[\(index)].\(path)", message: ""))
            }
        }
        #expect(traces.decodeFailures.count == 4)
        let all = 50
        var off = APITracer.Configuration(logging: .disabled)
        off.decodeFailureRateLimit = nil
        let unlimited = TestTracer(configuration: off)
        let everyFailure = unlimited.tracer
        for index in 0..<all {
            everyFailure.recordDecodeFailure(.init(entity: "X", kind: .keyNotFound, path: "items[\(index)].a", message: ""))
        }
        #expect(unlimited.events.count == all)
    }
}
