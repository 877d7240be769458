import APITraceFormat
import Testing

@Suite struct BackoffTests {
    @Test func equalJitterBetweenHalfAndTheCappedCeiling() {
        let backoff = Backoff(initial: .milliseconds(250), maximum: .seconds(30))
        for retry in 0..<80 {
            let ceiling = min(30_000, 250 * pow2(retry))
            #expect(backoff.ceilingMilliseconds(retry: retry) == ceiling)
            #expect(backoff.delayMilliseconds(retry: retry, random: { $0.lowerBound }) == ceiling / 2)
            #expect(backoff.delayMilliseconds(retry: retry, random: { $0.upperBound }) == ceiling)
            let drawn = backoff.delayMilliseconds(retry: retry)
            #expect(drawn >= ceiling / 2 && drawn <= ceiling)
        }
        // A server's base replaces the initial delay; nonsense retries and bases stay in bounds.
        #expect(backoff.ceilingMilliseconds(retry: 2, base: 1000) == 4000)
        #expect(backoff.ceilingMilliseconds(retry: -5) == 250)
        #expect(backoff.ceilingMilliseconds(retry: 3, base: -7) == 0)
        #expect(backoff.ceilingMilliseconds(retry: Int.max, base: 1e300) == 30_000)
    }

    private func pow2(_ n: Int) -> Double {
        var x = 1.0
        for _ in 0..<n { x *= 2 }
        return x
    }
}
