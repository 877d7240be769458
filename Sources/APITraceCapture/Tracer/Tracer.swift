import APITraceFormat
import Synchronization

/// Owns the sinks that events go to. Set one up once with ``bootstrap(_:)``, or pass instances
/// around in code that avoids globals.
///
/// ```swift
/// Tracer.bootstrap(Tracer(sinks: [TraceFileWriter(configuration: .init(directory: "traces"))]))
/// Tracer.shared.record(TraceEvent(.log(.init(level: "info", message: "hello"))))
/// ```
public final class Tracer: Sendable {
    /// The sinks every event goes to.
    public let sinks: [any TraceSink]

    /// Creates a tracer sending events to `sinks`.
    public init(sinks: [any TraceSink]) {
        self.sinks = sinks
    }

    /// Sends an event to every sink.
    public func record(_ event: TraceEvent) {
        for sink in sinks { sink.record(event) }
    }

    /// Flushes every sink.
    public func flush() {
        for sink in sinks { sink.flush() }
    }

    private static let global = Mutex<Tracer>(Tracer(sinks: []))

    /// The tracer set with ``bootstrap(_:)``; until then, one that records nothing.
    public static var shared: Tracer { global.withLock { $0 } }

    /// Sets the process-wide tracer.
    ///
    /// > Warning: Call it once, early, before any event is recorded; events recorded before it go nowhere.
    public static func bootstrap(_ tracer: Tracer) {
        global.withLock { $0 = tracer }
    }
}
