import APITraceFormat

extension Tracer {
    /// What a ``Tracer`` does to events before its sinks see them, and where its own log lines go.
    ///
    /// ```swift
    /// var configuration = Tracer.Configuration()
    /// configuration.sampling = .init(successRate: 0.1)
    /// configuration.redaction.queryParameterNames.insert("sig")
    /// configuration.eventHook = { event in event.type == "log" ? nil : event }
    /// let tracer = Tracer(sinks: [writer], configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// What is hidden from events, log lines and error messages. Default: ``Redaction/init()``.
        public var redaction: Redaction
        /// Which successful requests are kept. Default: all.
        public var sampling: Sampling
        /// Most `error` events written per identity and window; the rest are counted, not lost.
        /// Default: 10 per minute. `nil` writes every error.
        public var errorRateLimit: RateLimit?
        /// Where apitrace's own log lines go (requests at `debug`, errors at `error`, decode failures at `warning`).
        /// Default: ``LoggingFunction/stderr`` at `warning` and above.
        public var logging: LoggingFunction
        /// Session id stamped on events that have none. Default: `nil` (no `session` field).
        public var session: String?
        /// Called last with every event; return it (changed or not) to keep it, `nil` to drop it.
        /// Runs on the caller's thread: keep it fast.
        public var eventHook: (@Sendable (TraceEvent) -> TraceEvent?)?

        /// Creates a configuration with the defaults above.
        public init(
            redaction: Redaction = Redaction(),
            sampling: Sampling = Sampling(),
            errorRateLimit: RateLimit? = RateLimit(maxEvents: 10, per: .seconds(60)),
            logging: LoggingFunction = .stderr,
            session: String? = nil,
            eventHook: (@Sendable (TraceEvent) -> TraceEvent?)? = nil
        ) {
            self.redaction = redaction
            self.sampling = sampling
            self.errorRateLimit = errorRateLimit
            self.logging = logging
            self.session = session
            self.eventHook = eventHook
        }
    }
}
