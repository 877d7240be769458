extension TraceEvent.Request {
    /// Where a request's time went, as the platform measured it: the connection phases of the
    /// transaction that brought the response (`URLSessionTaskMetrics` on Apple platforms).
    ///
    /// Every field is optional: a reused connection has no DNS, connect or TLS phase, and Linux's
    /// `URLSession` delivers no metrics at all (there the request has its duration only). Phases are
    /// milliseconds, like `duration_ms`, and lie within it.
    public struct Timing: Sendable, Equatable {
        /// Name resolution (`dns_ms`).
        public var dnsMs: Double?
        /// Setting up the connection, TLS included, as HAR counts it (`connect_ms`).
        public var connectMs: Double?
        /// The TLS handshake, part of ``connectMs`` (`tls_ms`).
        public var tlsMs: Double?
        /// From the start of the fetch to the first byte of the response (`ttfb_ms`).
        public var firstByteMs: Double?
        /// The protocol that carried the response, as ALPN names it: `http/1.1`, `h2`, `h3` (`protocol`).
        public var networkProtocol: String?
        /// Whether the request went over a connection opened earlier (`reused`).
        public var reusedConnection: Bool?

        /// Creates timings; leave out what the platform did not measure.
        public init(
            dnsMs: Double? = nil, connectMs: Double? = nil, tlsMs: Double? = nil, firstByteMs: Double? = nil,
            networkProtocol: String? = nil, reusedConnection: Bool? = nil
        ) {
            self.dnsMs = dnsMs
            self.connectMs = connectMs
            self.tlsMs = tlsMs
            self.firstByteMs = firstByteMs
            self.networkProtocol = networkProtocol
            self.reusedConnection = reusedConnection
        }

        /// True when nothing was measured.
        public var isEmpty: Bool {
            dnsMs == nil && connectMs == nil && tlsMs == nil && firstByteMs == nil && networkProtocol == nil
                && reusedConnection == nil
        }
    }
}
