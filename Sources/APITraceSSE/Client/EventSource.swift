import APITraceCapture
import APITraceFormat
public import Foundation

/// A Server-Sent Events client on URLSession that reconnects the way the WHATWG spec says and traces
/// every open, close, reconnect and failure as `sse` events.
///
/// ```swift
/// let source = EventSource(configuration: .init(url: URL(string: "https://api.example.com/news/stream")!))
/// source.addListener(for: "breaking") { event in print("breaking:", event.data) }
/// for try await event in source.events() {
///     print(event.id, event.type, event.data)
/// }
/// // The loop ends when the server answers 204 or close() is called; it throws EventSourceError on a failure.
/// ```
///
/// Nothing connects until ``events()`` or ``start()`` is called, so no event is missed by listeners
/// added before. `Last-Event-ID` goes out on every reconnect once the server sent an id; the server's
/// `retry` sets the base delay of ``ReconnectPolicy``; a connection silent for
/// ``Configuration/idleTimeout`` counts as dropped.
public final class EventSource: Sendable {
    /// What the client connects to and how it reconnects.
    public let configuration: Configuration

    struct Shared {
        var state: EventSourceState = .closed
        var started = false
        var stopped = false
        var lastEventID: String
        var subscribers: [Int: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation] = [:]
        var nextSubscriber = 0
        var listeners: [(type: String?, handler: @Sendable (ServerSentEvent) -> Void)] = []
        var stateListeners: [@Sendable (EventSourceState) -> Void] = []
        var errorListeners: [@Sendable (EventSourceError) -> Void] = []
        var task: Task<Void, Never>?
        var failure: EventSourceError?
    }

    let shared: Locked<Shared>

    /// Creates a client; it connects on ``start()`` or ``events()``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.shared = Locked(Shared(lastEventID: configuration.lastEventID))
    }

    /// Creates a client for `url` with the default configuration.
    public convenience init(url: URL) {
        self.init(configuration: Configuration(url: url))
    }

    deinit {
        shared.withLock { $0.task?.cancel() }
    }

    /// The current state: ``EventSourceState/open`` only while a healthy connection is up.
    public var state: EventSourceState { shared.withLock { $0.state } }

    /// The last event id received (or configured): what the next reconnect sends as `Last-Event-ID`.
    public var lastEventID: String { shared.withLock { $0.lastEventID } }

    /// The failure that stopped the client, if it stopped on one.
    public var failure: EventSourceError? { shared.withLock { $0.failure } }

    /// The events from now on, in order, until the client stops: the sequence ends on HTTP 204 or
    /// ``close()`` and throws ``EventSourceError`` on a failure. Starts the client if needed.
    ///
    /// Each call returns a new sequence that receives every later event.
    public func events() -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let registered: Bool = shared.withLock { shared in
            if shared.stopped { return false }
            let key = shared.nextSubscriber
            shared.nextSubscriber += 1
            shared.subscribers[key] = continuation
            continuation.onTermination = { [weak self] _ in
                _ = self?.shared.withLock { $0.subscribers.removeValue(forKey: key) }
            }
            return true
        }
        if registered {
            start()
        } else {
            continuation.finish(throwing: failure)
        }
        return stream
    }

    /// Calls `handler` for every event of type `type` (every event when `nil`), on the client's task.
    /// Add listeners before ``start()`` to see the first event.
    public func addListener(for type: String? = nil, _ handler: @escaping @Sendable (ServerSentEvent) -> Void) {
        shared.withLock { $0.listeners.append((type, handler)) }
    }

    /// Calls `handler` on every state change.
    public func onStateChange(_ handler: @escaping @Sendable (EventSourceState) -> Void) {
        shared.withLock { $0.stateListeners.append(handler) }
    }

    /// Calls `handler` with every ``EventSourceError``: a connection dropped because the server broke
    /// ``Configuration/limits`` (the client reconnects), and the failure that stops the client.
    public func onError(_ handler: @escaping @Sendable (EventSourceError) -> Void) {
        shared.withLock { $0.errorListeners.append(handler) }
    }

    /// Starts connecting; does nothing when already started or stopped.
    public func start() {
        let begin: Bool = shared.withLock { shared in
            guard !shared.started, !shared.stopped else { return false }
            shared.started = true
            return true
        }
        guard begin else { return }
        setState(.connecting)
        let task = Task { await self.run() }
        shared.withLock { $0.task = task }
    }

    /// Stops for good: cancels the connection or the pending reconnect, ends every ``events()``
    /// sequence, and sets the state to ``EventSourceState/closed``. The URLSession is invalidated as
    /// the client's task ends; ``waitUntilStopped()`` waits for that.
    public func close() {
        let task = shared.withLock { $0.task }
        task?.cancel()
        stop(failure: nil)
    }

    /// Waits until the client's task has ended (after HTTP 204, a failure or ``close()``).
    public func waitUntilStopped() async {
        let task = shared.withLock { $0.task }
        await task?.value
    }

    // MARK: - Delivery

    func setState(_ newState: EventSourceState) {
        let listeners: [@Sendable (EventSourceState) -> Void]? = shared.withLock { shared in
            guard !shared.stopped, shared.state != newState else { return nil }
            shared.state = newState
            return shared.stateListeners
        }
        listeners?.forEach { $0(newState) }
    }

    /// Delivers one event to every sequence and listener; `false` once the client is stopped.
    @discardableResult
    func deliver(_ event: ServerSentEvent) -> Bool {
        let receivers = shared.withLock { shared -> (subscribers: [AsyncThrowingStream<ServerSentEvent, any Error>.Continuation], listeners: [(type: String?, handler: @Sendable (ServerSentEvent) -> Void)])? in
            guard !shared.stopped else { return nil }
            shared.lastEventID = event.id
            return (Array(shared.subscribers.values), shared.listeners)
        }
        guard let receivers else { return false }
        for subscriber in receivers.subscribers { subscriber.yield(event) }
        for listener in receivers.listeners where listener.type == nil || listener.type == event.type {
            listener.handler(event)
        }
        return true
    }

    func updateLastEventID(_ id: String) {
        shared.withLock { $0.lastEventID = id }
    }

    /// Ends every sequence and moves to `closed` for good.
    func stop(failure: EventSourceError?) {
        let (subscribers, listeners): ([AsyncThrowingStream<ServerSentEvent, any Error>.Continuation], [@Sendable (EventSourceState) -> Void]) = shared.withLock { shared in
            guard !shared.stopped else { return ([], []) }
            let wasClosed = shared.state == .closed
            shared.stopped = true
            shared.state = .closed
            shared.failure = failure
            let subscribers = Array(shared.subscribers.values)
            shared.subscribers.removeAll()
            return (subscribers, wasClosed ? [] : shared.stateListeners)
        }
        // Listeners first: code after the end of an `events()` loop sees the final state already reported.
        for listener in listeners { listener(.closed) }
        for subscriber in subscribers { subscriber.finish(throwing: failure) }
    }

    func report(_ error: EventSourceError) {
        let listeners = shared.withLock { $0.stopped ? [] : $0.errorListeners }
        for listener in listeners { listener(error) }
    }

    /// Records an `sse` event, with what the server chose (the last event id) and the reason cut to
    /// a few hundred bytes: a trace line stays far within what readers accept.
    func trace(_ sse: TraceEvent.SSE) {
        var sse = sse
        sse.lastEventID = sse.lastEventID.map { TraceText.clip($0, maximumBytes: TraceText.maximumIDBytes) }
        sse.reason = sse.reason.map { TraceText.clip($0, maximumBytes: TraceText.maximumFieldBytes) }
        sse.route = TraceText.clip(sse.route, maximumBytes: TraceText.maximumFieldBytes)
        (configuration.tracer ?? APITracer.shared).record(TraceEvent(.sse(sse)))
    }
}
