import APITraceCapture
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
}
