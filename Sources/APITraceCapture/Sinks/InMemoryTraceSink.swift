public import APITraceFormat

/// Keeps the most recent events in memory, for a screen of recent events in an app and for tests.
///
/// A ring buffer: past ``capacity`` events the oldest is overwritten and counted in
/// ``droppedCount``, so memory stays bounded however long the app runs.
///
/// ```swift
/// let recent = InMemoryTraceSink(capacity: 500)
/// APITracer.bootstrap(APITracer(sinks: [writer, recent]))
/// // later, on a debug screen: recent.events (oldest first), recent.droppedCount
/// ```
public final class InMemoryTraceSink: TraceSink {
    private struct Ring {
        var slots: [TraceEvent] = []
        /// Where the oldest event is once the ring is full.
        var head = 0
        var dropped = 0
    }

    private let storage = Locked(Ring())

    /// The most events kept; older ones are overwritten.
    public let capacity: Int

    /// The default ``capacity``: enough for a test or a screen of recent events.
    public static let defaultCapacity = 10_000

    /// Creates an empty sink keeping at most `capacity` events (at least one).
    public init(capacity: Int = InMemoryTraceSink.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    public func record(_ event: consuming TraceEvent) {
        let event = event  // moved into a local: a closure does not capture a consuming parameter
        storage.withLock { ring in
            if ring.slots.count < capacity {
                ring.slots.append(event)
            } else {
                ring.slots[ring.head] = event
                ring.head = (ring.head + 1) % capacity
                ring.dropped += 1
            }
        }
    }

    /// The events kept, oldest first.
    public var events: [TraceEvent] {
        storage.withLock { ring in
            ring.head == 0 ? ring.slots : Array(ring.slots[ring.head...] + ring.slots[..<ring.head])
        }
    }

    /// Events overwritten because the sink was full, since it was created or last emptied.
    public var droppedCount: Int { storage.withLock { $0.dropped } }

    /// Forgets every event kept and resets ``droppedCount``.
    public func removeAll() { storage.withLock { $0 = Ring() } }
}
