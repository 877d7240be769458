import APITraceCapture
import APITraceTesting
import Testing

@Suite("Sampling of successful requests")
struct SamplingTests {
    func request(status: Int?, error: String? = nil) -> TraceEvent {
        TraceEvent(.request(.init(method: "GET", route: "/apps", status: status, durationMs: 1, error: error)))
    }

    @Test("with rate 0 successes are dropped, failures always kept")
    func failuresAlwaysKept() {
        let traces = TestTracer(configuration: .init(sampling: Sampling(successRate: 0), logging: .disabled))
        for _ in 0..<100 { traces.tracer.record(request(status: 200)) }
        traces.tracer.record(request(status: 500))
        traces.tracer.record(request(status: 404))
        traces.tracer.record(request(status: nil, error: "URLError.timedOut"))
        #expect(traces.requests.compactMap(\.status) == [500, 404])
        #expect(traces.events.count == 3)
    }

    @Test("kept successes carry sample_rate, and their count is near rate x total")
    func rateRecorded() {
        let traces = TestTracer(configuration: .init(sampling: Sampling(successRate: 0.25), logging: .disabled))
        let total = 20_000
        for _ in 0..<total { traces.tracer.record(request(status: 200)) }
        let kept = traces.requests
        #expect(kept.allSatisfy { $0.sampleRate == 0.25 })
        // Binomial(20000, 0.25): mean 5000, sd ~61; 8 sd either side.
        #expect(abs(kept.count - 5000) < 490)
    }

    @Test("without sampling every request is kept with no sample_rate")
    func noSampling() {
        let traces = TestTracer()
        for _ in 0..<10 { traces.tracer.record(request(status: 200)) }
        #expect(traces.events.count == 10)
        #expect(traces.events.allSatisfy { $0.request?.sampleRate == nil })
    }

    @Test("sampling follows the request's outcome: a 200 whose body broke off is a success (the status wins) and is sampled, weighted as readers weigh it")
    func samplingFollowsTheOutcome() {
        let traces = TestTracer(configuration: .init(sampling: Sampling(successRate: 0.25), logging: .disabled))
        let total = 20_000
        for _ in 0..<total { traces.tracer.record(request(status: 200, error: "URLError.networkConnectionLost")) }
        traces.tracer.record(request(status: 600))
        let kept = traces.requests
        let successes = kept.filter { $0.status == 200 }
        #expect(successes.allSatisfy { $0.outcome == .success && $0.sampleRate == 0.25 && $0.weight == 4 })
        // Binomial(20000, 0.25): mean 5000, sd ~61; 8 sd either side.
        #expect(abs(successes.count - 5000) < 490)
        // A 600 is a failure (server_error): never sampled, no weight of its own.
        #expect(kept.filter { $0.status == 600 }.map(\.sampleRate) == [nil])
    }
}
