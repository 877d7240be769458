import APITraceFormat

/// Keeps events in memory, for tests and for showing recent events in an app.
public final class InMemoryTraceSink: TraceSink {
    private let storage = Locked<[TraceEvent]>([])

    /// Creates an empty sink.
    public init() {}

    public func record(_ event: TraceEvent) {
        storage.withLock { $0.append(event) }
    }

    /// Every event recorded so far, in order.
    public var events: [TraceEvent] { storage.withLock { $0 } }

    /// Forgets every event recorded so far.
    public func removeAll() { storage.withLock { $0.removeAll() } }
}
