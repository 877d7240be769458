import APITraceWebSocket
import Testing

@Suite("WebSocket reconnect policy")
struct WebSocketReconnectPolicyTests {
    @Test("which codes reconnect by default")
    func codes() {
        let policy = WebSocketReconnectPolicy()
        for code in [1001, 1006, 1011, 1012, 1013, 1014] { #expect(policy.reconnects(afterCode: code), "code \(code)") }
        for code in [1000, 1002, 1003, 1007, 1008, 1009, 1010, 4000, 4001, 4999] { #expect(!policy.reconnects(afterCode: code), "code \(code)") }
        var always = policy
        always.reconnectOnNormalClosure = true
        #expect(always.reconnects(afterCode: 1000))
    }

    @Test("delays: the backoff's d/2 + jitter, never under the floor nor over the cap", arguments: [0.0, 0.5, 1.0])
    func delays(fraction: Double) {
        let policy = WebSocketReconnectPolicy(
            initialDelay: .milliseconds(100), maximumDelay: .seconds(2), minimumDelay: .milliseconds(80),
            random: { range in range.lowerBound + (range.upperBound - range.lowerBound) * fraction })
        for retry in 0..<10 {
            // Independently: d = min(2000, 100 * 2^retry); delay = d/2 + fraction * d/2, at least 80.
            let d = min(2000.0, 100.0 * Double(1 << retry))
            let expected = max(80.0, d / 2 + fraction * d / 2)
            #expect(abs(policy.delayMilliseconds(retry: retry) - expected) < 1e-9, "retry \(retry)")
        }
    }
}
