@testable import APITraceCapture
import Testing

@Suite("Error rate limits count what they hold back")
struct RateLimitTests {
    @Test("past the limit errors are suppressed, and flush writes the count as a rate_limited drop")
    func suppressedThenDropped() throws {
        let (tracer, sink) = makeTracer(errorRateLimit: RateLimit(maxEvents: 3, per: .seconds(3600)))
        for _ in 0..<10 { tracer.recordError(NewsError.offline) }
        for _ in 0..<2 { tracer.recordError(NewsError.badStatus(500)) }
        let errors = sink.events.compactMap(\.recordedError)
        #expect(errors.filter { $0.identity == "NewsError.offline" }.count == 3)
        #expect(errors.filter { $0.identity == "NewsError.badStatus" }.count == 2)
        #expect(errors.allSatisfy { $0.suppressed == nil })
        tracer.flush()
        let drops = sink.events.compactMap(\.dropped)
        #expect(drops == [TraceEvent.Dropped(count: 7, reason: "rate_limited")])
        // Nothing is counted twice.
        tracer.flush()
        #expect(sink.events.compactMap(\.dropped).count == 1)
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
        let (tracer, sink) = makeTracer(errorRateLimit: RateLimit(maxEvents: 4, per: .milliseconds(1)))
        var recorded = 0
        for i in 0..<2000 {
            tracer.recordError(i % 3 == 0 ? NewsError.offline as any Error : NewsError.badStatus(i))
            recorded += 1
        }
        tracer.flush()
        let errors = sink.events.compactMap(\.recordedError)
        let suppressed = errors.reduce(0) { $0 + ($1.suppressed ?? 0) }
        let dropped = sink.events.compactMap(\.dropped).reduce(0) { $0 + $1.count }
        #expect(errors.count + suppressed + dropped == recorded)
    }

    @Test("no limit writes every error")
    func unlimited() {
        let (tracer, sink) = makeTracer(errorRateLimit: nil)
        for _ in 0..<50 { tracer.recordError(NewsError.offline) }
        #expect(sink.events.count == 50)
    }
}
