import APITraceFormat
import Foundation

/// Something ended on the caller's thread whose event is built later, off that thread: a span of
/// `RequestSpanTracer`, whose attribute pick-up, route, ids as text and the tracer's steps (sampling,
/// redaction, the event hook) cost more than the caller should pay.
package protocol DeferredEvent: AnyObject, Sendable {
    /// Builds the event of something that ended at `end` and records it into `tracer`; runs on the
    /// tracer's drain thread, never on the thread that ended it.
    func recordDeferred(endedAt end: ContinuousClock.Instant, into tracer: APITracer)
}

/// Ended items waiting for their events to be built, and the thread that builds them.
///
/// The caller's thread takes one lock for nanoseconds to append and, as a rule, wakes nobody:
/// waking a thread per item measured about 10 µs on the caller (the woken thread preempts it), more
/// than building the event there. The drain thread looks every ``pollInterval`` while items keep
/// coming; after ``lingering`` without any it sleeps until an append wakes it (the one append that
/// pays for a wake-up) or half of ``capacity`` is waiting. It takes the whole batch in one swap and
/// records the items in the order they were appended. At most ``capacity`` items wait: beyond that
/// an item is counted, not kept, and a `dropped` event with reason ``dropReason`` says how many.
/// ``APITracer/flush()`` drains first, so nothing appended before a flush is missing after it.
final class DeferredEvents: @unchecked Sendable {
    // @unchecked: every field below is guarded by `condition`; `tracer` is set once, under it.

    /// The `dropped` reason for ended spans held back because ``capacity`` were already waiting.
    static let dropReason = "span_queue_full"
    /// The default ``capacity``.
    static let defaultCapacity = 10_000
    /// How often the drain thread looks for items while they keep coming.
    static let pollInterval = 0.005
    /// How long the drain thread keeps looking without finding any before it sleeps.
    static let lingering = 1.0

    private let condition = NSCondition()
    private var items: [(any DeferredEvent, ContinuousClock.Instant)] = []
    private var dropped = 0
    private var started = false
    private var sleeping = false
    private var flushRequested = 0
    private var flushCompleted = 0
    /// The thread's tracer, held weakly: the thread ends with it.
    private weak var tracer: APITracer?
    private var drainThread: Thread?

    /// Most items waiting at once.
    let capacity: Int
    private let wakeThreshold: Int

    init(capacity: Int = DeferredEvents.defaultCapacity) {
        self.capacity = max(1, capacity)
        wakeThreshold = max(1, capacity / 2)
    }

    /// Queues `item`, ended at `end`, for `tracer`'s drain; counts it as dropped when ``capacity`` are waiting.
    @inline(__always)
    func append(_ item: any DeferredEvent, endedAt end: ContinuousClock.Instant, tracer: APITracer) {
        condition.lock()
        if items.count < capacity {
            items.append((item, end))
        } else {
            dropped += 1
        }
        if !started {
            start(tracer)
        } else if sleeping || items.count == wakeThreshold {
            sleeping = false
            condition.signal()
        }
        condition.unlock()
    }

    /// Records every item queued before the call, waiting until it is done. Called on the drain
    /// thread (an event hook that flushes), does nothing: that drain goes on when the hook returns.
    func drainNow() {
        condition.lock()
        defer { condition.unlock() }
        guard started, Thread.current !== drainThread else { return }
        flushRequested += 1
        let ticket = flushRequested
        sleeping = false
        condition.broadcast()
        while flushCompleted < ticket { condition.wait() }
    }

    /// Lets the drain thread end once its tracer is gone (called from the tracer's `deinit`).
    func stop() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Starts the drain thread; called under the lock by the first append.
    private func start(_ tracer: APITracer) {
        started = true
        self.tracer = tracer
        // Not the Swift concurrency pool: a thread of its own, which may block in an event hook.
        let thread = Thread { [self] in run() }
        thread.name = "apitrace.deferred-events"
        drainThread = thread
        thread.start()
    }

    /// The drain thread: takes batches until its tracer is gone.
    private func run() {
        var batch: [(any DeferredEvent, ContinuousClock.Instant)] = []
        var idleSince = Date()
        condition.lock()
        while true {
            while items.isEmpty && dropped == 0 && flushRequested == flushCompleted {
                if tracer == nil { condition.unlock(); return }
                let now = Date()
                if now.timeIntervalSince(idleSince) >= Self.lingering {
                    sleeping = true
                    condition.wait()
                    idleSince = Date()
                } else {
                    _ = condition.wait(until: now.addingTimeInterval(Self.pollInterval))
                }
            }
            sleeping = false
            // Every item appended before a flush was requested is in this batch or an earlier one.
            let ticket = flushRequested
            let droppedNow = dropped
            dropped = 0
            swap(&items, &batch)
            do {
                // Scoped so that this strong reference ends before the lock is taken again: when
                // it is the tracer's last one, its `deinit` runs here and calls `stop()`, which
                // takes the lock (taking it while holding it would hang this thread).
                let tracer = self.tracer
                condition.unlock()
                if let tracer {
                    for (item, end) in batch { item.recordDeferred(endedAt: end, into: tracer) }
                    if droppedNow > 0 {
                        tracer.deliver(TraceEvent(session: tracer.session, .dropped(.init(count: droppedNow, reason: Self.dropReason))))
                    }
                }
            }
            // Released here, on this thread, not under the lock.
            batch.removeAll(keepingCapacity: true)
            idleSince = Date()
            condition.lock()
            flushCompleted = ticket
            condition.broadcast()
        }
    }
}
