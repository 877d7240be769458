import APITraceSSE
import Testing

@Suite("Reconnect policy: exponential backoff with equal jitter")
struct ReconnectPolicyTests {
    @Test("defaults follow launchdarkly/swift-eventsource: 1 s base, 30 s cap, reset after 60 s")
    func defaults() {
        let policy = ReconnectPolicy()
        #expect(policy.initialDelay == .seconds(1))
        #expect(policy.maximumDelay == .seconds(30))
        #expect(policy.resetAfter == .seconds(60))
    }

    @Test("the ceiling doubles per retry from the base and stops at the cap", arguments: 0..<12)
    func ceiling(_ retry: Int) {
        let policy = ReconnectPolicy()
        var expected = 1000.0
        for _ in 0..<retry { expected = min(expected * 2, 30_000) }
        #expect(policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: nil) == expected)
        #expect(policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: 250) == min(250 * Double(1 << retry), 30_000))
    }

    @Test("every drawn delay lies in d/2 ... d, and the draws spread over the range")
    func jitterBounds() {
        let policy = ReconnectPolicy()
        for retry in 0..<8 {
            let ceiling = policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: 300)
            let draws = (0..<500).map { _ in policy.delayMilliseconds(retry: retry, serverRetryMilliseconds: 300) }
            #expect(draws.allSatisfy { $0 >= ceiling / 2 && $0 <= ceiling })
            // 500 uniform draws: some in the lower and some in the upper quarter of the range.
            #expect(draws.contains { $0 < ceiling * 0.625 } && draws.contains { $0 > ceiling * 0.875 })
        }
    }

    @Test("a server retry of 0 means reconnect at once; a huge retry count does not overflow")
    func extremes() {
        let policy = ReconnectPolicy()
        #expect(policy.delayMilliseconds(retry: 3, serverRetryMilliseconds: 0) == 0)
        #expect(policy.delayCeilingMilliseconds(retry: 10_000, serverRetryMilliseconds: nil) == 30_000)
        #expect(policy.delayCeilingMilliseconds(retry: 1, serverRetryMilliseconds: Int.max) == 30_000)
    }
}
