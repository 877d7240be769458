import APITraceTestSupport
import APITraceCapture
import APITraceTesting
import Foundation
import Testing

@Suite("One request lifecycle")
struct TracedRequestTests {
    @Test("finish and fail write one request event each, and a log line with the duration")
    func finishAndFail() throws {
        let logs = LogCollector()
        let traces = TestTracer(configuration: .init(logging: logs.function(minimumLevel: .debug)))
        let url = URL(string: "https://me:pw@api.example.com/apps/42?token=t")!
        let ok = traces.tracer.startRequest(method: "GET", url: url, attempt: 2, bytesOut: 5)
        ok.finish(status: 201, bytesIn: 7, at: ok.startedAt + .milliseconds(12))
        let failed = traces.tracer.startRequest(method: "POST", url: url, route: "/apps/{id}")
        failed.fail(URLError(.timedOut), at: failed.startedAt + .milliseconds(30))
        let requests = traces.requests
        #expect(requests == [
            TraceEvent.Request(method: "GET", route: "/apps/{id}", host: "api.example.com", status: 201, durationMs: 12, bytesIn: 7, bytesOut: 5, attempt: 2, port: 443),
            TraceEvent.Request(method: "POST", route: "/apps/{id}", host: "api.example.com", status: nil, durationMs: 30, error: "URLError.timedOut", port: 443),
        ])
        let lines = logs.records.map(\.message)
        #expect(lines.count == 2)
        #expect(lines.first == "GET /apps/{id} -> 201 (12.0 ms)")
        #expect(lines.last?.hasPrefix("POST /apps/{id} failed after 30.0 ms: URLError.timedOut") == true)
    }

    @Test("with sampling, only successful kept requests carry sample_rate; failures never do")
    func sampleRateOnlyOnSuccesses() {
        let traces = TestTracer(configuration: .init(sampling: Sampling(successRate: 0.5), logging: .disabled))
        for status in [200, 204, 404, 500, 503] {
            for _ in 0..<200 { traces.tracer.startRequest(method: "GET", route: "/a", host: nil).finish(status: status, bytesIn: 0) }
        }
        for _ in 0..<200 { traces.tracer.startRequest(method: "GET", route: "/a", host: nil).fail(URLError(.cancelled)) }
        let requests = traces.requests
        let failures = requests.filter { $0.error != nil || ($0.status ?? 0) >= 400 }
        #expect(failures.count == 800)
        #expect(failures.allSatisfy { $0.sampleRate == nil })
        let successes = requests.filter { $0.error == nil && ($0.status ?? 0) < 400 }
        #expect(successes.allSatisfy { $0.sampleRate == 0.5 })
        // 400 successes at 0.5: far from 0 and 400 (binomial sd 10).
        #expect(successes.count > 100 && successes.count < 300)
    }

    @Test("a traceparent joins the caller's context when a provider finds one, else starts a trace")
    func traceContext() {
        let caller = TraceParent(traceID: "4bf92f3577b34da6a3ce929d0e0e4736", parentID: "00f067aa0ba902b7")
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.traceContext = TraceContextProvider { caller }
        let tracer = TestTracer(configuration: configuration).tracer
        let url = URL(string: "http://127.0.0.1/a")!
        let joined = tracer.startRequest(method: "GET", url: url, injectsTraceParent: true)
        let header = TraceParent(headerValue: joined.traceParentHeader ?? "")
        #expect(header?.traceID == caller.traceID)
        #expect(header?.parentID != caller.parentID)
        #expect(joined.traceID == caller.traceID)
        // A traceparent already on the request wins and nothing is added.
        let existing = TraceParent.random()
        let kept = tracer.startRequest(method: "GET", url: url, traceParent: existing.headerValue, injectsTraceParent: true)
        #expect(kept.traceParentHeader == nil)
        #expect(kept.traceID == existing.traceID)
        // Without a provider: a fresh trace per request.
        let plain = TestTracer().tracer
        let a = plain.startRequest(method: "GET", url: url, injectsTraceParent: true)
        let b = plain.startRequest(method: "GET", url: url, injectsTraceParent: true)
        #expect(a.traceID != nil && a.traceID != b.traceID)
    }
}
