/// Requests and failures counted in one window.
public struct WindowTotals: Sendable, Equatable, Codable {
    /// Requests, successful sampled ones weighted by `1 / sample_rate`.
    public var requests: Double
    /// Failed requests (and decode failures when the rule counts them).
    public var failures: Double

    /// Creates totals.
    public init(requests: Double, failures: Double) {
        self.requests = requests
        self.failures = failures
    }

    /// Failures over requests, at most 1; 0 without requests.
    public var ratio: Double { requests > 0 ? min(1, failures / requests) : 0 }
}
