import APITraceSSE
import Testing

@Suite("Reconnect policy: exponential backoff with equal jitter")
struct ReconnectPolicyTests {
    @Test("defaults follow launchdarkly/swift-eventsource: 1 s base, 30 s cap, reset after 60 s; floor 0.5 s")
    func defaults() {
        let policy = ReconnectPolicy()
        #expect(policy.initialDelay == .seconds(1))
        #expect(policy.minimumDelay == .milliseconds(500))
        #expect(policy.maximumDelay == .seconds(30))
        #expect(policy.resetAfter == .seconds(60))
    }

    @Test("the ceiling doubles per retry from the base and stops at the cap", arguments: 0..<12)
    func ceiling(_ retry: Int) {
        let policy = ReconnectPolicy()
        var expected = 1000.0
        for _ in 0..<retry { expected = min(expected * 2, 30_000) }
        #expect(policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: nil) == expected)
        #expect(policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: 750) == min(750 * Double(1 << retry), 30_000))
        // A server retry under the floor counts as the floor.
        #expect(policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: 250) == min(500 * Double(1 << retry), 30_000))
    }

    @Test("every drawn delay lies in d/2 ... d, and the draws spread over the range")
    func jitterBounds() {
        let policy = ReconnectPolicy()
        for retry in 0..<8 {
            let ceiling = policy.delayCeilingMilliseconds(retry: retry, serverRetryMilliseconds: 1000)
            let draws = (0..<500).map { _ in policy.delayMilliseconds(retry: retry, serverRetryMilliseconds: 1000) }
            #expect(draws.allSatisfy { $0 >= ceiling / 2 && $0 <= ceiling })
            // 500 uniform draws: some in the lower and some in the upper quarter of the range.
            #expect(draws.contains { $0 < ceiling * 0.625 } && draws.contains { $0 > ceiling * 0.875 })
        }
    }

    @Test("a server retry of 0 cannot go under the floor, and consecutive reconnects still double from it",
          arguments: [0, 1, 499])
    func serverRetryUnderTheFloor(_ serverRetry: Int) {
        let top = ReconnectPolicy(random: { $0.upperBound })
        let bottom = ReconnectPolicy(random: { $0.lowerBound })
        #expect((0..<5).map { top.delayMilliseconds(retry: $0, serverRetryMilliseconds: serverRetry) } == [500, 1000, 2000, 4000, 8000])
        // The lowest draw of equal jitter (d/2) is held at the floor too.
        #expect((0..<5).map { bottom.delayMilliseconds(retry: $0, serverRetryMilliseconds: serverRetry) } == [500, 500, 1000, 2000, 4000])
        let custom = ReconnectPolicy(minimumDelay: .seconds(2), maximumDelay: .seconds(1))
        #expect(custom.delayMilliseconds(retry: 4, serverRetryMilliseconds: serverRetry) == 2000, "a floor above the cap wins")
    }

    @Test("a huge retry count or server retry does not overflow")
    func extremes() {
        let policy = ReconnectPolicy()
        #expect(policy.delayCeilingMilliseconds(retry: 10_000, serverRetryMilliseconds: nil) == 30_000)
        #expect(policy.delayCeilingMilliseconds(retry: 1, serverRetryMilliseconds: Int.max) == 30_000)
    }
}
