@testable import APITraceCapture
import APITraceTesting
import Testing

@Suite("Error rate limits count what they hold back")
struct RateLimitTests {
    @Test("past the limit errors are suppressed, and flush writes the count as a rate_limited drop")
    func suppressedThenDropped() throws {
        let traces = TestTracer(configuration: .init(errorRateLimit: RateLimit(maxEvents: 3, per: .seconds(3600)), logging: .disabled))
        for _ in 0..<10 { traces.tracer.recordError(NewsError.offline) }
        for _ in 0..<2 { traces.tracer.recordError(NewsError.badStatus(500)) }
        let errors = traces.errors
        #expect(errors.filter { $0.identity == "NewsError.offline" }.count == 3)
        #expect(errors.filter { $0.identity == "NewsError.badStatus" }.count == 2)
        #expect(errors.allSatisfy { $0.suppressed == nil })
        traces.tracer.flush()
        let drops = traces.dropped
        #expect(drops == [TraceEvent.Dropped(count: 7, reason: "rate_limited")])
        // Nothing is counted twice.
        traces.tracer.flush()
        #expect(traces.dropped.count == 1)
    }

    @Test("the next error of an identity in a new window carries the suppressed count")
    func suppressedOnNextEvent() {
        let limiter = RateLimiter(RateLimit(maxEvents: 2, per: .seconds(60)))
        let start = ContinuousClock.now
        #expect(limiter.admit("A", now: start) == .admit(suppressed: 0))
        #expect(limiter.admit("A", now: start) == .admit(suppressed: 0))
        for _ in 0..<5 { #expect(limiter.admit("A", now: start + .seconds(1)) == .suppress) }
        #expect(limiter.admit("B", now: start + .seconds(1)) == .admit(suppressed: 0))
        #expect(limiter.admit("A", now: start + .seconds(61)) == .admit(suppressed: 5))
        #expect(limiter.admit("A", now: start + .seconds(62)) == .admit(suppressed: 0))
        #expect(limiter.admit("A", now: start + .seconds(62)) == .suppress)
        #expect(limiter.drainSuppressed() == 1)
        #expect(limiter.drainSuppressed() == 0)
    }

    @Test("events + suppressed + rate_limited drops add up to every error recorded")
    func totalsAddUp() {
        let traces = TestTracer(configuration: .init(errorRateLimit: RateLimit(maxEvents: 4, per: .milliseconds(1)), logging: .disabled))
        var recorded = 0
        for i in 0..<2000 {
            traces.tracer.recordError(i % 3 == 0 ? NewsError.offline as any Error : NewsError.badStatus(i))
            recorded += 1
        }
        traces.tracer.flush()
        let errors = traces.errors
        let suppressed = errors.reduce(0) { $0 + ($1.suppressed ?? 0) }
        let dropped = traces.dropped.reduce(0) { $0 + $1.count }
        #expect(errors.count + suppressed + dropped == recorded)
    }

    @Test("no limit writes every error")
    func unlimited() {
        let traces = TestTracer(configuration: .init(errorRateLimit: nil, logging: .disabled))
        for _ in 0..<50 { traces.tracer.recordError(NewsError.offline) }
        #expect(traces.events.count == 50)
    }
}
