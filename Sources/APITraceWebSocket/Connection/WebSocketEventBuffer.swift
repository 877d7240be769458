import APITraceFormat

/// The events waiting for the app, between the connection's task and the one reader of
/// ``WebSocketEvents``; its bound is what keeps a flooding server from filling memory.
///
/// Messages wait for room (``push(_:)`` suspends while ``capacity`` are queued, so the connection
/// stops reading the socket and TCP pushes back on the server); connection events are few and
/// always go in (``pushNow(_:)``). When the reader goes away, everything queued is dropped and
/// ``onReaderGone`` runs once.
final class WebSocketEventBuffer: Sendable {
    private struct State {
        var queue: [WebSocketEvent] = []
        var head = 0
        var finished = false
        var failure: (any Error)?
        var readerGone = false
        var reader: CheckedContinuation<WebSocketEvent?, any Error>?
        var waitingForRoom: [CheckedContinuation<Void, Never>] = []
        var stalled = false

        var count: Int { queue.count - head }

        mutating func takeFirst() -> WebSocketEvent? {
            guard head < queue.count else { return nil }
            let event = queue[head]
            head += 1
            if head > 64, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return event
        }
    }

    /// Most messages queued at once.
    let capacity: Int
    private let state = Locked(State())
    private let readerGoneHandler = Locked<(@Sendable () -> Void)?>(nil)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Runs once when the reader stops reading before the sequence ended.
    func onReaderGone(_ handler: @escaping @Sendable () -> Void) {
        readerGoneHandler.withLock { $0 = handler }
    }

    /// Whether the connection is waiting for the reader to make room (its silence is then ours, not the peer's).
    var isStalled: Bool { state.withLock { $0.stalled } }

    /// Queues a message, waiting while the buffer is full; `false` when nobody will read it any more.
    func push(_ event: WebSocketEvent) async -> Bool {
        while true {
            enum Step { case delivered, queued, full, gone }
            let (step, reader): (Step, CheckedContinuation<WebSocketEvent?, any Error>?) = state.withLock { s in
                if s.readerGone || s.finished { return (.gone, nil) }
                if let reader = s.reader {
                    s.reader = nil
                    return (.delivered, reader)
                }
                if s.count < capacity {
                    s.queue.append(event)
                    return (.queued, nil)
                }
                s.stalled = true
                return (.full, nil)
            }
            switch step {
            case .delivered:
                reader?.resume(returning: event)
                return true
            case .queued:
                return true
            case .gone:
                return false
            case .full:
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { s -> Bool in
                        if s.readerGone || s.finished || s.count < capacity { return true }
                        s.waitingForRoom.append(waiter)
                        return false
                    }
                    if resumeNow { waiter.resume() }
                }
            }
        }
    }

    /// Queues a connection event without waiting.
    func pushNow(_ event: WebSocketEvent) {
        let reader: CheckedContinuation<WebSocketEvent?, any Error>? = state.withLock { s in
            if s.readerGone || s.finished { return nil }
            if let reader = s.reader {
                s.reader = nil
                return reader
            }
            s.queue.append(event)
            return nil
        }
        reader?.resume(returning: event)
    }

    /// Ends the sequence after what is queued, throwing `failure` at its end if given.
    func finish(throwing failure: (any Error)? = nil) {
        let (reader, waiters): (CheckedContinuation<WebSocketEvent?, any Error>?, [CheckedContinuation<Void, Never>]) = state.withLock { s in
            guard !s.finished else { return (nil, []) }
            s.finished = true
            s.failure = failure
            let waiters = s.waitingForRoom
            s.waitingForRoom = []
            let reader = s.count == 0 ? s.reader : nil
            if reader != nil { s.reader = nil }
            return (reader, waiters)
        }
        waiters.forEach { $0.resume() }
        if let reader {
            if let failure { reader.resume(throwing: failure) } else { reader.resume(returning: nil) }
        }
    }

    /// The next event, `nil` at the end; throws the failure the sequence ended with.
    func next() async throws -> WebSocketEvent? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<WebSocketEvent?, any Error>) in
                enum Answer { case event(WebSocketEvent), end((any Error)?), wait }
                let (answer, waiters): (Answer, [CheckedContinuation<Void, Never>]) = state.withLock { s in
                    if let event = s.takeFirst() {
                        // Room again: wake the connection's task if it waits.
                        let waiters = s.waitingForRoom
                        s.waitingForRoom = []
                        s.stalled = false
                        return (.event(event), waiters)
                    }
                    if s.readerGone { return (.end(nil), []) }
                    if s.finished {
                        let failure = s.failure
                        s.failure = nil
                        return (.end(failure), [])
                    }
                    s.reader = reader
                    s.stalled = false
                    let waiters = s.waitingForRoom
                    s.waitingForRoom = []
                    return (.wait, waiters)
                }
                waiters.forEach { $0.resume() }
                switch answer {
                case .event(let event): reader.resume(returning: event)
                case .end(let failure?): reader.resume(throwing: failure)
                case .end(nil): reader.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            readerLeft()
        }
    }

    /// The reader stopped: drop what is queued, end its wait, wake the connection, tell the owner.
    func readerLeft() {
        let (reader, waiters, first): (CheckedContinuation<WebSocketEvent?, any Error>?, [CheckedContinuation<Void, Never>], Bool) = state.withLock { s in
            let first = !s.readerGone && !s.finished
            s.readerGone = true
            s.queue = []
            s.head = 0
            let reader = s.reader
            s.reader = nil
            let waiters = s.waitingForRoom
            s.waitingForRoom = []
            return (reader, waiters, first)
        }
        reader?.resume(returning: nil)
        waiters.forEach { $0.resume() }
        if first, let handler = readerGoneHandler.withLock({ $0 }) { handler() }
    }
}

/// The events of a ``WebSocketConnection``, in order, for one reader.
///
/// Ends after the last `disconnected` when the client stops for good (a normal close, a close the
/// policy does not retry, ``WebSocketConnection/close(code:reason:)``), and throws ``WebSocketError``
/// when it gives up. A reader that stops reading closes the connection with 1001.
public struct WebSocketEvents: AsyncSequence, Sendable {
    public typealias Element = WebSocketEvent
    let buffer: WebSocketEventBuffer

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: Reader
        public mutating func next() async throws -> WebSocketEvent? { try await reader.buffer.next() }
    }

    /// Tells the buffer when the loop that read it is gone (a `break` drops the iterator).
    final class Reader: Sendable {
        let buffer: WebSocketEventBuffer
        init(buffer: WebSocketEventBuffer) { self.buffer = buffer }
        deinit { buffer.readerLeft() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: Reader(buffer: buffer)) }
}
