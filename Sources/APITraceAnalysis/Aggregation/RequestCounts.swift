public import APITraceFormat

/// Counts of requests by outcome (``RequestOutcome``, the format module's one classification).
///
/// - an **error** is a `server_error` (5xx) or a `transport` failure;
/// - a **client error** is a 4xx, counted apart;
/// - **cancelled** and **offline** are client-side outcomes (the app cancelled, the device had no
///   network): counted apart and left out of every rate, since they say nothing about the API;
/// - everything else (1xx, 2xx, 3xx) is a **success**.
///
/// Sampled successes stand for `1 / sample_rate` requests each (``RequestWeight``); a
/// `sample_rate` anywhere else is ignored.
public struct RequestCounts: Sendable, Equatable {
    /// Request events read.
    public var requests = 0
    /// Requests with a 5xx status.
    public var serverErrors = 0
    /// Requests with a 4xx status.
    public var clientErrors = 0
    /// Requests whose transport failed (no status), client-side outcomes excluded.
    public var transportErrors = 0
    /// Requests the app cancelled.
    public var cancelled = 0
    /// Requests that never left the device (no network).
    public var offline = 0
    /// Successful requests scaled by `1 / sample_rate` where honoured (1 each otherwise).
    public var estimatedSuccesses: Double = 0
    /// Requests whose `sample_rate` was honoured.
    public var sampled = 0
    /// Response body bytes received (`bytes_in`).
    public var bytesIn: Int64 = 0
    /// Request body bytes sent (`bytes_out`).
    public var bytesOut: Int64 = 0

    /// Creates zero counts.
    public init() {}

    /// Errors: transport failures plus 5xx.
    public var errors: Int { serverErrors + transportErrors }
    /// Client-side outcomes: cancelled plus offline.
    public var clientSide: Int { cancelled + offline }
    /// Successes (1xx-3xx) as read.
    public var successes: Int { requests - errors - clientErrors - clientSide }
    /// Requests that reached a verdict (client-side outcomes excluded), sampled successes scaled
    /// back up; the denominator of every rate.
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

    /// Counts one request with its outcome and weight (``TraceEvent/Request/outcome``, ``RequestWeight``).
    @inline(__always)
    public mutating func add(outcome: RequestOutcome, weight: Double = 1, bytesIn: Int64?, bytesOut: Int64?) {
        requests += 1
        switch outcome {
        case .success:
            estimatedSuccesses += weight
            if weight != 1 { sampled += 1 }
        case .clientError: clientErrors += 1
        case .serverError: serverErrors += 1
        case .transport: transportErrors += 1
        case .cancelled: cancelled += 1
        case .offline: offline += 1
        }
        if let bytesIn { self.bytesIn = self.bytesIn.addingSaturated(bytesIn) }
        if let bytesOut { self.bytesOut = self.bytesOut.addingSaturated(bytesOut) }
    }

    /// Counts one request record.
    public mutating func add(_ request: TraceEvent.Request) {
        let outcome = request.outcome
        add(outcome: outcome, weight: RequestWeight.of(outcome: outcome, sampleRate: request.sampleRate).weight,
            bytesIn: request.bytesIn, bytesOut: request.bytesOut)
    }

    /// Adds another set of counts.
    public mutating func merge(_ other: RequestCounts) {
        requests = requests.addingSaturated(other.requests)
        serverErrors = serverErrors.addingSaturated(other.serverErrors)
        clientErrors = clientErrors.addingSaturated(other.clientErrors)
        transportErrors = transportErrors.addingSaturated(other.transportErrors)
        cancelled = cancelled.addingSaturated(other.cancelled)
        offline = offline.addingSaturated(other.offline)
        estimatedSuccesses += other.estimatedSuccesses
        sampled = sampled.addingSaturated(other.sampled)
        bytesIn = bytesIn.addingSaturated(other.bytesIn)
        bytesOut = bytesOut.addingSaturated(other.bytesOut)
    }
}
