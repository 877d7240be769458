public import APITraceFormat

/// Where a ``APITracer`` sends events: a trace file writer, memory (for tests), or several.
///
/// `record(_:)` is called on the caller's thread, so it must return in nanoseconds and never do I/O.
public protocol TraceSink: Sendable {
    /// Takes one event. Must not block on I/O.
    ///
    /// The event is handed over (`consuming`), so a sink that keeps it moves it instead of copying
    /// it; a sink written as `func record(_ event: TraceEvent)` still conforms.
    func record(_ event: consuming TraceEvent)
    /// Writes everything taken so far to its destination, waiting until it is done.
    func flush()
}

extension TraceSink {
    /// Does nothing: for sinks with nothing to write.
    public func flush() {}
}

extension TraceFileWriter: TraceSink {
    /// Queues the event for the background writer.
    public func record(_ event: consuming TraceEvent) { append(event) }
}
