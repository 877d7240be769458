import APITraceFormat

/// Where a ``APITracer`` sends events: a trace file writer, memory (for tests), or several.
///
/// `record(_:)` is called on the caller's thread, so it must return in nanoseconds and never do I/O.
public protocol TraceSink: Sendable {
    /// Takes one event. Must not block on I/O.
    func record(_ event: TraceEvent)
    /// Writes everything taken so far to its destination, waiting until it is done.
    func flush()
}

extension TraceSink {
    /// Does nothing: for sinks with nothing to write.
    public func flush() {}
}

extension TraceFileWriter: TraceSink {
    /// Queues the event for the background writer.
    public func record(_ event: TraceEvent) { append(event) }
}
