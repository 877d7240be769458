extension TraceEvent {
    /// One HTTP request performed by a backend (`"type":"request"`).
    public struct Request: Sendable, Equatable {
        /// HTTP method, upper case (`method`).
        public var method: String
        /// Route template such as `/apps/{id}`, never raw ids (`route`).
        public var route: String
        /// Server host name (`host`).
        public var host: String?
        /// Server port, when the URL named one or its scheme implies one (`port`).
        public var port: Int?
        /// HTTP status; `nil` when the transport failed (`status`).
        public var status: Int?
        /// Time from sending to the end of the response body, in milliseconds (`duration_ms`).
        public var durationMs: Double
        /// Response body bytes received (`bytes_in`).
        public var bytesIn: Int64?
        /// Request body bytes sent (`bytes_out`).
        public var bytesOut: Int64?
        /// Stable identity of the error, such as `URLError.timedOut`; `nil` on success (`error`).
        public var error: String?
        /// 1 for the first try, 2 for the first retry, and so on (`attempt`).
        public var attempt: Int
        /// Share of successful requests kept by sampling, when sampling is on (`sample_rate`).
        /// A reader scales counts of successful requests by `1 / sampleRate`.
        public var sampleRate: Double?
        /// Connection phases, protocol and reuse, where the platform measured them (``Timing``).
        public var timing: Timing?

        /// Creates a request record.
        public init(
            method: String, route: String, host: String? = nil, status: Int? = nil, durationMs: Double,
            bytesIn: Int64? = nil, bytesOut: Int64? = nil, error: String? = nil, attempt: Int = 1,
            sampleRate: Double? = nil, timing: Timing? = nil, port: Int? = nil
        ) {
            self.port = port
            self.method = method
            self.route = route
            self.host = host
            self.status = status
            self.durationMs = durationMs
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.error = error
            self.attempt = attempt
            self.sampleRate = sampleRate
            self.timing = timing.flatMap { $0.isEmpty ? nil : $0 }
        }
    }
}

extension TraceEvent.Request {
    /// What became of the request (``RequestOutcome``).
    public var outcome: RequestOutcome { RequestOutcome.of(status: status, error: error) }

    /// Requests this record stands for (`RequestWeight`).
    public var weight: Double { RequestWeight.of(outcome: outcome, sampleRate: sampleRate).weight }
}
