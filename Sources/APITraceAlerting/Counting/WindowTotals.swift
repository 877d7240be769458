/// Requests and failures counted in one window.
package struct WindowTotals: Sendable, Equatable, Codable {
    /// Requests, successful sampled ones weighted by `1 / sample_rate`.
    package var requests: Double
    /// Failed requests (and decode failures when the rule counts them).
    package var failures: Double

    /// Creates totals.
    package init(requests: Double, failures: Double) {
        self.requests = requests
        self.failures = failures
    }

    /// Failures over requests, at most 1; 0 without requests.
    package var ratio: Double { requests > 0 ? min(1, failures / requests) : 0 }
}
