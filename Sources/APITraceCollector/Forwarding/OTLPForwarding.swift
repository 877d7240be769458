public import APITraceExport

/// How a ``TraceCollector`` forwards what it stores to an OpenTelemetry pipeline (OTLP/HTTP).
///
/// Every stored upload is copied into a bounded spool on disk (`.otlp-spool/` in the collector's
/// folder) and sent from there by a thread of its own: an upload is never refused or slowed
/// because the endpoint is down, slow or refusing. See `Docs/collection.md`.
///
/// ```swift
/// let endpoint = try OTLPEndpoint.configure(endpoint: "http://otel:4318")   // headers from OTEL_EXPORTER_OTLP_HEADERS
/// var configuration = TraceCollector.Configuration(directory: "traces", tokens: [token])
/// configuration.otlpForwarding = OTLPForwarding(endpoint: endpoint)
/// ```
public struct OTLPForwarding: Sendable {
    /// Where and how to send (URLs, headers, encoding, gzip). Header values are never printed.
    public var endpoint: OTLPEndpoint
    /// Most bytes (compressed uploads) the spool holds; past it the oldest are dropped and counted. Default 1 GiB.
    public var maxSpoolBytes: Int
    /// Most uploads the spool holds; past it the oldest are dropped and counted. Default 10,000.
    public var maxSpoolFiles: Int
    /// Spans plus log records per OTLP request.
    public var batchSize: Int
    /// Time one HTTP attempt may take, connecting included. Default 10 s.
    public var timeout: Duration
    /// Tries per request before the forwarder backs off (the sender honours `Retry-After` between them). Default 3.
    public var attemptsPerRound: Int
    /// The first wait of the sender's backoff between tries; doubled after each. Default 0.5 s.
    public var retryDelay: Duration
    /// The ceiling of the forwarder's backoff between rounds of tries (a receiver down for long). Default 60 s.
    public var maxRetryDelay: Duration

    /// Creates a forwarding configuration with the defaults above.
    public init(
        endpoint: OTLPEndpoint, maxSpoolBytes: Int = 1 << 30, maxSpoolFiles: Int = 10_000, batchSize: Int = 2048,
        timeout: Duration = .seconds(10), attemptsPerRound: Int = 3, retryDelay: Duration = .milliseconds(500),
        maxRetryDelay: Duration = .seconds(60)
    ) {
        self.endpoint = endpoint
        self.maxSpoolBytes = maxSpoolBytes
        self.maxSpoolFiles = maxSpoolFiles
        self.batchSize = batchSize
        self.timeout = timeout
        self.attemptsPerRound = attemptsPerRound
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
    }
}
