public import APITraceCapture

/// A tracer of one test's own, with the events it recorded.
///
/// Inside ``withTestTracer(configuration:capacity:_:)`` (or ``scope(_:)``), `APITracer.shared`
/// is this tracer for the current task and the tasks it starts, so code under test that uses
/// `.shared` (every adapter's default `tracer:`, `recordError`, traced decoding) records here.
/// Tests running in parallel each see only their own events.
///
/// ```swift
/// @Test func recordsTheRoute() async throws {
///     try await withTestTracer { traces in
///         let backend = TracingBackend(StubBackend.status(200))   // tracer: .shared, created inside the scope
///         _ = try await backend.perform(BackendRequest(url: url, route: "/apps/{id}"))
///         #expect(traces.requests.map(\.route) == ["/apps/{id}"])
///     }
/// }
/// ```
///
/// > Important: An adapter resolves `.shared` when it is created: create the code under test
/// > inside the scope, or pass ``tracer`` explicitly. `Task.detached` does not inherit the scope.
public final class TestTracer: Sendable {
    /// The tracer; pass it as `tracer:` where code does not use `.shared`.
    public let tracer: APITracer
    /// The sink behind ``tracer``, bounded like any ``InMemoryTraceSink``.
    public let sink: InMemoryTraceSink

    /// Creates a tracer recording into memory. Logging is off unless `configuration` turns it on,
    /// so tests stay quiet.
    public init(
        configuration: APITracer.Configuration = APITracer.Configuration(logging: .disabled),
        capacity: Int = InMemoryTraceSink.defaultCapacity
    ) {
        sink = InMemoryTraceSink(capacity: capacity)
        tracer = APITracer(sinks: [sink], configuration: configuration)
    }

    /// Runs `body` with `APITracer.shared` bound to this tracer for the current task and its child tasks.
    public func scope<Result>(
        _ body: () async throws -> Result, isolation: isolated (any Actor)? = #isolation
    ) async rethrows -> Result {
        try await APITracer.$scoped.withValue(tracer, operation: body, isolation: isolation)
    }

    /// Runs `body` with `APITracer.shared` bound to this tracer, for synchronous code.
    public func scope<Result>(_ body: () throws -> Result) rethrows -> Result {
        try APITracer.$scoped.withValue(tracer, operation: body)
    }

    // MARK: - What was recorded

    /// Every event kept, oldest first, including those of spans ended so far through a
    /// `RequestSpanTracer`, which are built off the caller's thread (read waits for them).
    public var events: [TraceEvent] {
        tracer.drainDeferred()
        return sink.events
    }

    /// The `request` events.
    public var requests: [TraceEvent.Request] { events.requests }

    /// The `decode_failure` events.
    public var decodeFailures: [TraceEvent.DecodeFailure] { events.decodeFailures }

    /// The `error` events.
    public var errors: [TraceEvent.RecordedError] { events.errors }

    /// The `sse` events.
    public var sse: [TraceEvent.SSE] { events.sse }

    /// The `websocket` events.
    public var webSockets: [TraceEvent.WebSocket] { events.webSockets }

    /// The `log` events.
    public var logs: [TraceEvent.Log] { events.logs }

    /// The `dropped` events: what the tracer's rate limits held back.
    public var dropped: [TraceEvent.Dropped] { events.dropped }

    /// Forgets every event recorded so far.
    public func removeAll() { sink.removeAll() }
}

/// Runs `body` with a fresh ``TestTracer`` bound as `APITracer.shared` for the current task and
/// its child tasks, and hands it to `body` to read what was recorded.
///
/// ```swift
/// try await withTestTracer { traces in
///     recordError(AppError.offline)
///     #expect(traces.errors.map(\.identity) == ["AppError.offline"])
/// }
/// ```
public func withTestTracer<Result>(
    configuration: APITracer.Configuration = APITracer.Configuration(logging: .disabled),
    capacity: Int = InMemoryTraceSink.defaultCapacity,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestTracer) async throws -> Result
) async rethrows -> Result {
    let testTracer = TestTracer(configuration: configuration, capacity: capacity)
    return try await APITracer.$scoped.withValue(testTracer.tracer, operation: { try await body(testTracer) }, isolation: isolation)
}
