import APITraceCapture
import APITraceFormat
import APITraceTestSupport
import APITraceTesting
import Foundation
import Testing

private enum CheckoutError: Error {
    case declined
}

@Suite("Test tracer")
struct TestTracerTests {
    private let url = URL(string: "https://api.example.com/apps/42")!

    @Test("inside the scope, .shared and everything that defaults to it record into the test's tracer")
    func sharedIsScoped() async throws {
        try await withTestTracer { traces in
            #expect(APITracer.shared === traces.tracer)
            recordError(CheckoutError.declined, userInfo: ["screen": "cart"])
            let backend = TracingBackend(StubBackend.status(204))
            _ = try await backend.perform(BackendRequest(method: "DELETE", url: url, route: "/apps/{id}"))
            #expect(traces.errors.map(\.identity) == ["CheckoutError.declined"])
            #expect(traces.errors.first?.userInfo == ["screen": "cart"])
            #expect(traces.requests.map(\.method) == ["DELETE"])
            #expect(traces.requests.map(\.route) == ["/apps/{id}"])
            #expect(traces.requests.map(\.status) == [204])
            #expect(traces.events.count == 2)
        }
    }

    @Test("outside the scope, .shared is the process-wide tracer again")
    func scopeEnds() async {
        let inside = await withTestTracer { traces in traces.tracer }
        #expect(APITracer.shared !== inside)
    }

    @Test("tests running in parallel each see only their own events")
    func parallelScopesAreIsolated() async throws {
        let seen = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for test in 0..<6 {
                group.addTask {
                    try await withTestTracer { traces in
                        for n in 0..<40 {
                            let backend = TracingBackend(StubBackend.status(200))
                            _ = try await backend.perform(BackendRequest(url: URL(string: "https://t\(test).example.com/x/\(n)")!, route: "/t\(test)/\(n)"))
                            await Task.yield()
                        }
                        return (test, traces.requests.map(\.route))
                    }
                }
            }
            var all: [Int: [String]] = [:]
            for try await (test, routes) in group { all[test] = routes }
            return all
        }
        #expect(seen.count == 6)
        for (test, routes) in seen {
            #expect(routes == (0..<40).map { "/t\(test)/\($0)" })
        }
    }

    @Test("child tasks inherit the scope; a detached task does not")
    func childTasks() async {
        await withTestTracer { traces in
            await Task { recordError(CheckoutError.declined) }.value
            await withTaskGroup(of: Void.self) { group in
                group.addTask { recordError(CheckoutError.declined) }
            }
            let detachedSaw = await Task.detached { APITracer.shared === traces.tracer }.value
            #expect(!detachedSaw)
            #expect(traces.errors.count == 2)
        }
    }

    @Test("the scope also works for synchronous code, and an explicit tracer works without one")
    func synchronousAndExplicit() throws {
        let test = TestTracer()
        test.scope { recordError(CheckoutError.declined) }
        test.tracer.recordError(CheckoutError.declined)
        #expect(test.errors.count == 2)
        test.removeAll()
        #expect(test.events.isEmpty)
    }

    @Test("the test tracer is bounded like any in-memory sink")
    func bounded() async {
        await withTestTracer(configuration: .init(errorRateLimit: nil, logging: .disabled), capacity: 3) { traces in
            for _ in 0..<10 { recordError(CheckoutError.declined) }
            #expect(traces.events.count == 3)
            #expect(traces.sink.droppedCount == 7)
        }
    }

    @Test("each accessor returns the events of its type and no other, in order, from a tracer or from a trace file read back")
    func accessorsByType() throws {
        let webSocket = TraceEvent.WebSocket(phase: .close, route: "/live", code: 1006, reason: "network_error")
        let recorded = everyEventType + [TraceEvent(.websocket(webSocket))]
        let traces = TestTracer(configuration: .init(errorRateLimit: nil, logging: .disabled, session: nil, decodeFailureRateLimit: nil))
        for event in recorded { traces.tracer.record(event) }
        // Counted from the payloads' `type` field, independently of the accessors.
        let count = { (type: String) in recorded.filter { $0.type == type }.count }
        #expect(traces.events.count == recorded.count)
        #expect(traces.requests.count == count("request") && count("request") > 0)
        #expect(traces.decodeFailures.count == count("decode_failure") && count("decode_failure") > 0)
        #expect(traces.errors.count == count("error") && count("error") > 0)
        #expect(traces.sse.count == count("sse") && count("sse") > 0)
        #expect(traces.webSockets == [webSocket])
        #expect(traces.logs.count == count("log") && count("log") > 0)
        #expect(traces.dropped.count == count("dropped") && count("dropped") > 0)
        #expect(traces.requests.map(\.route) == recorded.compactMap { if case .request(let r) = $0.payload { r.route } else { nil } })
        let first = try #require(traces.events.first { $0.request?.route == "/apps/{id}" })
        #expect(first.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(first.decodeFailure == nil && first.recordedError == nil && first.sse == nil && first.webSocket == nil && first.log == nil && first.dropped == nil)

        // The same accessors on the events of a trace file read back.
        let dir = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: dir.path, producer: "accessors"))
        for event in recorded { writer.append(event) }
        writer.close()
        var read: [TraceEvent] = []
        let result = TraceFileReader(path: try #require(dir.traceFiles.first)).forEachEvent { read.append($0) }
        #expect(result.warnings.isEmpty)
        #expect(read.requests.map(\.route) == traces.requests.map(\.route))
        #expect(read.requests.map(\.status) == recorded.compactMap { if case .request(let r) = $0.payload { r.status } else { nil } })
        #expect(read.webSockets == [webSocket])
        #expect(read.errors.map(\.identity) == traces.errors.map(\.identity))
    }
}
