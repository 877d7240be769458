public import APITraceFormat

/// Owns the configuration and the sinks that events go to. Set one up once with ``bootstrap(_:)``,
/// or pass instances around in code that avoids globals.
///
/// ```swift
/// APITracer.bootstrap(APITracer(sinks: [TraceFileWriter(configuration: .init(directory: TraceDirectory.default))]))
/// APITracer.shared.recordError(error, userInfo: ["screen": "apps"])
/// ```
///
/// Every event goes through the same steps before the sinks, on the caller's thread:
/// rate limiting (`error` events), sampling (successful `request` events), redaction of free text,
/// the session id, then the user's ``Configuration/eventHook``, which may rewrite or drop it.
/// The one exception is `RequestSpanTracer` (`APITraceDistributedTracing`): the caller's thread only
/// queues the ended span, and its event goes through these steps on the tracer's drain thread,
/// before ``flush()`` returns at the latest.
public final class APITracer: Sendable {
    /// The sinks every event goes to.
    public let sinks: [any TraceSink]
    /// How events are filtered, redacted and logged.
    public let configuration: Configuration

    let errorLimiter: RateLimiter?
    let decodeFailureLimiter: RateLimiter?
    let traceContext: TraceContextProvider?
    let sampler: Sampler
    // Copies of configuration fields, so the hot path does not copy the whole configuration.
    let redaction: Redaction
    let session: String?
    let eventHook: (@Sendable (TraceEvent) -> TraceEvent?)?
    let logging: LoggingFunction
    /// Ended spans whose events are built off the caller's thread.
    let deferred = DeferredEvents()
    /// Transport and decode failures this tracer recorded, so `recordError` does not count them again.
    let tracedFailures = TracedFailures()

    /// Creates a tracer sending events to `sinks`.
    public init(sinks: [any TraceSink], configuration: Configuration = Configuration()) {
        self.sinks = sinks
        self.configuration = configuration
        self.errorLimiter = configuration.errorRateLimit.map(RateLimiter.init)
        self.decodeFailureLimiter = configuration.decodeFailureRateLimit.map(RateLimiter.init)
        self.traceContext = configuration.traceContext
        self.sampler = Sampler(successRate: configuration.sampling.successRate)
        self.redaction = configuration.redaction
        self.session = configuration.session
        self.eventHook = configuration.eventHook
        self.logging = configuration.logging
    }

    deinit {
        deferred.stop()
    }

    /// Sends an event through the configured steps to every sink.
    ///
    /// Never throws and never blocks on I/O: sinks queue events, and a sink's failure stays inside it.
    public func record(_ event: consuming TraceEvent) {
        submit(event)
    }

    /// Runs the steps and delivers the event; `false` when a step held it back.
    ///
    /// The event is taken, not copied, and a request's payload is only copied when sampling
    /// rewrites it: every traced request comes through here on the caller's thread. `rateLimited`:
    /// the caller already admitted an `error` event through the limit.
    @discardableResult
    func submit(_ event: consuming TraceEvent, rateLimited: Bool = false) -> Bool {
        switch event.payload {
        case .request(let request):
            if sampler.isSampling {
                guard sampler.keep(request) else { return false }
                // Only successes are sampled (Docs/trace-format.md), so only they carry a weight.
                if Sampler.isSampled(request) {
                    var sampled = request
                    sampled.sampleRate = sampler.successRate
                    event.payload = .request(sampled)
                }
            }
        case .error(let error):
            // `recordError` checked the limit before building the event (`rateLimited`).
            if let errorLimiter, !rateLimited {
                switch errorLimiter.admit(error.identity) {
                case .suppress:
                    return false
                case .admit(let suppressed):
                    if suppressed > 0 {
                        var counted = error
                        counted.suppressed = (error.suppressed ?? 0) + suppressed
                        event.payload = .error(counted)
                    }
                }
            }
        case .decodeFailure(let failure):
            if let decodeFailureLimiter {
                switch decodeFailureLimiter.admit(Self.decodeFailureGroup(failure)) {
                case .suppress:
                    return false
                case .admit(let suppressed):
                    if suppressed > 0 {
                        deliver(TraceEvent(session: session, .dropped(.init(count: suppressed, reason: Self.decodeFailureDropReason))))
                    }
                }
            }
        default:
            break
        }
        redaction.redact(&event)
        if event.session == nil { event.session = session }
        if let hook = eventHook {
            guard let rewritten = hook(event) else { return false }
            event = rewritten
        }
        deliver(event)
        return true
    }

    /// Hands an event to the sinks without any step: a copy to each but the last, which takes it.
    func deliver(_ event: consuming TraceEvent) {
        guard let last = sinks.last else { return }
        for sink in sinks.dropLast() { sink.record(copy event) }
        last.record(event)
    }

    /// Queues something ended on the caller's thread; its event is built and recorded on the drain
    /// thread, in the order of these calls, and before ``flush()`` returns at the latest. Past
    /// 10,000 waiting, an item is counted in a `dropped` event (reason `span_queue_full`) instead.
    package func recordLater(_ item: any DeferredEvent, endedAt end: ContinuousClock.Instant) {
        deferred.append(item, endedAt: end, tracer: self)
    }

    /// Records every event queued with ``recordLater(_:endedAt:)`` before the call, waiting until
    /// it is done, without flushing the sinks.
    package func drainDeferred() {
        deferred.drainNow()
    }

    /// Records the events of ended spans still queued (see `RequestSpanTracer`), writes pending
    /// rate-limit counts as `dropped` events (reason `rate_limited`), then flushes every sink.
    ///
    /// When it returns, every event of a span that ended before the call is in the sinks.
    public func flush() {
        deferred.drainNow()
        if let errorLimiter {
            let pending = errorLimiter.drainSuppressed()
            if pending > 0 {
                deliver(TraceEvent(session: configuration.session, .dropped(.init(count: pending, reason: "rate_limited"))))
            }
        }
        if let decodeFailureLimiter {
            let pending = decodeFailureLimiter.drainSuppressed()
            if pending > 0 {
                deliver(TraceEvent(session: configuration.session, .dropped(.init(count: pending, reason: Self.decodeFailureDropReason))))
            }
        }
        for sink in sinks { sink.flush() }
    }

    /// The `dropped` reason for decode failures held back by ``Configuration/decodeFailureRateLimit``;
    /// distinct from `rate_limited`, which counts errors.
    package static let decodeFailureDropReason = "decode_failure_rate_limited"

    /// What decode failures are limited by: the same key failing in every element of a page is one group.
    static func decodeFailureGroup(_ failure: TraceEvent.DecodeFailure) -> String {
        failure.entity + " " + failure.kind.rawValue + " " + failure.pathPattern
    }

    private static let global = Locked<APITracer>(APITracer(sinks: []))

    /// The tracer set with ``bootstrap(_:)``; until then, one that records nothing.
    ///
    /// Inside a task scoped to a tracer of its own (`APITraceTesting`'s `withTestTracer`), that tracer.
    public static var shared: APITracer { scoped ?? global.withLock { $0 } }

    /// Sets the process-wide tracer.
    ///
    /// > Warning: Call it once, early, before any event is recorded; events recorded before it go nowhere.
    /// > Components that captured ``shared`` before keep the tracer they captured.
    public static func bootstrap(_ tracer: APITracer) {
        global.withLock { $0 = tracer }
    }
}
