public import APITraceFormat

extension APITracer {
    /// What a ``APITracer`` does to events before its sinks see them, and where its own log lines go.
    ///
    /// ```swift
    /// var configuration = APITracer.Configuration()
    /// configuration.sampling = .init(successRate: 0.1)
    /// configuration.redaction.queryParameterNames.insert("sig")
    /// configuration.eventHook = { event in event.type == "log" ? nil : event }
    /// let tracer = APITracer(sinks: [writer], configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// What is hidden from events, log lines and error messages. Default: `Redaction()`.
        public var redaction: Redaction
        /// Which successful requests are kept. Default: all.
        public var sampling: Sampling
        /// Most `error` events written per identity and window; the rest are counted, not lost.
        /// Default: 10 per minute. `nil` writes every error.
        public var errorRateLimit: RateLimit?
        /// Most `decode_failure` events written per group (entity, kind and path with indices folded)
        /// and window; the rest are counted in a `dropped` event with reason `decode_failure_rate_limited`,
        /// written before the next one of that group or at ``APITracer/flush()``. Default: 10 per minute.
        /// `nil` writes every decode failure.
        public var decodeFailureRateLimit: RateLimit?
        /// Where the caller's distributed-trace context comes from, so requests join it
        /// (see ``TraceContextProvider``). Default: `nil` (random trace ids when injecting `traceparent`).
        public var traceContext: TraceContextProvider?
        /// Where apitrace's own log lines go (requests at `debug`, errors at `error`, decode failures at `warning`).
        /// Default: ``LoggingFunction/stderr`` at `warning` and above.
        public var logging: LoggingFunction
        /// Session id stamped on events that have none, so reports count the sessions a failure
        /// touched. Default: ``processSession``, one random id per process; set your own (a login
        /// or app-launch id), or `nil` for no `session` field.
        public var session: String?
        /// Called last with every event; return it (changed or not) to keep it, `nil` to drop it.
        /// Runs on the caller's thread: keep it fast. The events of `RequestSpanTracer` spans are
        /// the exception: they are built and passed here on the tracer's drain thread, one at a time.
        /// It sees events after redaction, so what it adds is not redacted.
        ///
        /// The place to add or rewrite fields per request, whichever adapter recorded it:
        ///
        /// ```swift
        /// configuration.eventHook = { event in
        ///     var event = event
        ///     if case .request(var request) = event.payload, request.route.hasPrefix("/v1/") {
        ///         request.route = "/v2/" + request.route.dropFirst(4)   // report old and new API together
        ///         event.payload = .request(request)
        ///     }
        ///     return event
        /// }
        /// ```
        public var eventHook: (@Sendable (TraceEvent) -> TraceEvent?)?

        /// Creates a configuration with the defaults above.
        public init(
            redaction: Redaction = Redaction(),
            sampling: Sampling = Sampling(),
            errorRateLimit: RateLimit? = RateLimit(maxEvents: 10, per: .seconds(60)),
            logging: LoggingFunction = .stderr,
            session: String? = Configuration.processSession,
            eventHook: (@Sendable (TraceEvent) -> TraceEvent?)? = nil,
            decodeFailureRateLimit: RateLimit? = RateLimit(maxEvents: 10, per: .seconds(60)),
            traceContext: TraceContextProvider? = nil
        ) {
            self.decodeFailureRateLimit = decodeFailureRateLimit
            self.traceContext = traceContext
            self.redaction = redaction
            self.sampling = sampling
            self.errorRateLimit = errorRateLimit
            self.logging = logging
            self.session = session
            self.eventHook = eventHook
        }

        /// The default ``session``: a random id made once per process (32 hex digits).
        public static let processSession: String = {
            var generator = SystemRandomNumberGenerator()
            let (a, b) = (generator.next() as UInt64, generator.next() as UInt64)
            return String(a, radix: 16).leftPadded(to: 16) + String(b, radix: 16).leftPadded(to: 16)
        }()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
