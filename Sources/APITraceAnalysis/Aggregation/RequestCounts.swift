/// Counts of requests by outcome, exact.
///
/// The error definitions used throughout reports:
/// - an **error** is a request whose transport failed (no status) or whose status is 5xx;
/// - a **client error** is a 4xx, counted apart;
/// - everything else (1xx, 2xx, 3xx) is a **success**.
///
/// When a producer samples successful requests it writes `sample_rate` on the ones it keeps;
/// ``estimatedRequests`` scales those by `1 / sample_rate` (errors are never sampled).
public struct RequestCounts: Sendable, Equatable {
    /// Request events read.
    public var requests = 0
    /// Requests with a 5xx status.
    public var serverErrors = 0
    /// Requests with a 4xx status.
    public var clientErrors = 0
    /// Requests whose transport failed (no status).
    public var transportErrors = 0
    /// Successful requests scaled by `1 / sample_rate` where present (1 each otherwise).
    public var estimatedSuccesses: Double = 0
    /// Requests that carried a `sample_rate`.
    public var sampled = 0
    /// Response body bytes received (`bytes_in`).
    public var bytesIn: Int64 = 0
    /// Request body bytes sent (`bytes_out`).
    public var bytesOut: Int64 = 0

    /// Creates zero counts.
    public init() {}

    /// Errors: transport failures plus 5xx.
    public var errors: Int { serverErrors + transportErrors }
    /// Successes (1xx-3xx) as read.
    public var successes: Int { requests - errors - clientErrors }
    /// Requests with sampled successes scaled back up; equals ``requests`` without sampling.
    public var estimatedRequests: Double { Double(errors + clientErrors) + estimatedSuccesses }

    /// Errors per estimated request, 0 when there are none.
    public var errorRate: Double { ratio(errors) }
    /// Client errors per estimated request, 0 when there are none.
    public var clientErrorRate: Double { ratio(clientErrors) }

    /// `part` per estimated request, 0 when there are none.
    public func ratio(_ part: Int) -> Double {
        let total = estimatedRequests
        return total > 0 ? Double(part) / total : 0
    }

    /// Counts one request. `status` is `nil` when the transport failed.
    @inline(__always)
    public mutating func add(status: Int?, sampleRate: Double?, bytesIn: Int64?, bytesOut: Int64?) {
        requests += 1
        if let status {
            if status >= 500 { serverErrors += 1 }
            else if status >= 400 { clientErrors += 1 }
            else { addSuccess(sampleRate) }
        } else {
            transportErrors += 1
        }
        if let bytesIn { self.bytesIn &+= bytesIn }
        if let bytesOut { self.bytesOut &+= bytesOut }
    }

    @inline(__always)
    private mutating func addSuccess(_ sampleRate: Double?) {
        if let sampleRate, sampleRate > 0, sampleRate <= 1 {
            sampled += 1
            estimatedSuccesses += 1 / sampleRate
        } else {
            estimatedSuccesses += 1
        }
    }

    /// Adds another set of counts.
    public mutating func merge(_ other: RequestCounts) {
        requests += other.requests
        serverErrors += other.serverErrors
        clientErrors += other.clientErrors
        transportErrors += other.transportErrors
        estimatedSuccesses += other.estimatedSuccesses
        sampled += other.sampled
        bytesIn &+= other.bytesIn
        bytesOut &+= other.bytesOut
    }
}
