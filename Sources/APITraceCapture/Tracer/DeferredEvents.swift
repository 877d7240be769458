import APITraceFormat
import Dispatch

/// Something ended on the caller's thread whose event is built later, off that thread: a span of
/// `RequestSpanTracer`, whose attribute pick-up, route, ids as text and the tracer's steps (sampling,
/// redaction, the event hook) cost more than the caller should pay.
package protocol DeferredEvent: AnyObject, Sendable {
    /// Builds the event of something that ended at `end` and records it into `tracer`; runs on the
    /// tracer's drain queue, never on the thread that ended it.
    func recordDeferred(endedAt end: ContinuousClock.Instant, into tracer: APITracer)
}

/// Ended items waiting for their events to be built, and the serial queue that builds them.
///
/// The caller's thread takes one lock for nanoseconds to append; the first append after the queue
/// went idle wakes it (one `async` per batch, not per item). The drain takes the whole batch in one
/// swap and records every item in the order they were appended. At most ``capacity`` items wait:
/// beyond that an item is counted, not kept, and a `dropped` event with reason
/// ``dropReason`` says how many. ``APITracer/flush()`` drains first, so nothing appended before a
/// flush is missing after it.
final class DeferredEvents: Sendable {
    private struct Pending: Sendable {
        var items: [(any DeferredEvent, ContinuousClock.Instant)] = []
        var dropped = 0
        /// True from the wake-up `async` until a drain finds nothing left.
        var scheduled = false
    }

    /// The `dropped` reason for ended spans held back because ``capacity`` were already waiting.
    static let dropReason = "span_queue_full"
    /// The default ``capacity``.
    static let defaultCapacity = 10_000

    private let pending = Locked(Pending())
    /// Most items waiting at once.
    let capacity: Int
    private let queue: DispatchQueue
    /// Set on ``queue``, to tell a flush called from inside a drain (an event hook that flushes).
    private let onQueue = DispatchSpecificKey<Bool>()

    init(capacity: Int = DeferredEvents.defaultCapacity) {
        self.capacity = max(1, capacity)
        // Not the Swift concurrency pool: a queue of libdispatch's own, whose threads may block.
        queue = DispatchQueue(label: "apitrace.deferred-events", qos: .utility)
        queue.setSpecific(key: onQueue, value: true)
    }

    /// Queues `item`, ended at `end`, for `tracer`'s drain; counts it as dropped when ``capacity`` are waiting.
    @inline(__always)
    func append(_ item: any DeferredEvent, endedAt end: ContinuousClock.Instant, tracer: APITracer) {
        let wake = pending.withLock { pending in
            if pending.items.count < capacity {
                pending.items.append((item, end))
            } else {
                pending.dropped += 1
            }
            guard !pending.scheduled else { return false }
            pending.scheduled = true
            return true
        }
        if wake { queue.async { [self] in drain(tracer) } }
    }

    /// Records every item queued before the call, waiting until it is done. Called from inside a
    /// drain (an event hook that flushes), does nothing: that drain goes on when the hook returns.
    func drainNow(_ tracer: APITracer) {
        guard DispatchQueue.getSpecific(key: onQueue) == nil else { return }
        queue.sync { drain(tracer) }
    }

    /// Runs on ``queue`` only: takes batches until none is left.
    private func drain(_ tracer: APITracer) {
        var batch: [(any DeferredEvent, ContinuousClock.Instant)] = []
        while true {
            let dropped = pending.withLock { pending in
                let dropped = pending.dropped
                pending.dropped = 0
                if pending.items.isEmpty {
                    pending.scheduled = false
                    // Hand back the larger buffer, so the next batch appends without growing.
                    if pending.items.capacity < batch.capacity { swap(&pending.items, &batch) }
                } else {
                    swap(&pending.items, &batch)
                }
                return dropped
            }
            if batch.isEmpty && dropped == 0 { return }
            for (item, end) in batch { item.recordDeferred(endedAt: end, into: tracer) }
            batch.removeAll(keepingCapacity: true)
            if dropped > 0 {
                tracer.deliver(TraceEvent(session: tracer.session, .dropped(.init(count: dropped, reason: Self.dropReason))))
            }
        }
    }
}
