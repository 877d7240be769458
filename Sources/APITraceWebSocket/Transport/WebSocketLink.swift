package import APITraceFormat
package import Foundation

/// What a transport writes on the app's behalf.
package enum WebSocketCommand: Sendable {
    case text(String, WebSocketLink.Completion)
    case binary(Data, WebSocketLink.Completion)
    /// A ping with this 8-byte payload.
    case ping(UInt64)
    /// A close frame; the transport then waits for the peer's close.
    case close(code: Int, reason: String?)
}

/// One connection attempt between ``WebSocketConnection`` and a transport: the commands to write,
/// the counters the trace reports, and the way messages reach the app.
///
/// Transports call ``opened(_:)`` after the handshake, ``received(text:)``/``received(binary:)``
/// per message, ``sawFrame()`` for every frame from the peer, ``pong(_:)`` for pongs and
/// ``wrote(bytes:)`` per message sent. All of it is cheap: a lock held for nanoseconds.
package final class WebSocketLink: Sendable {
    package typealias Completion = @Sendable ((any Error)?) -> Void

    package struct Stats: Sendable {
        package var startedAt: ContinuousClock.Instant
        package var openedAt: ContinuousClock.Instant?
        package var handshake: WebSocketHandshake?
        package var messagesIn = 0, messagesOut = 0
        package var bytesIn: Int64 = 0, bytesOut: Int64 = 0
        package var lastFrameAt: ContinuousClock.Instant?
        package var longestSilence: Duration = .zero
        package var pingSentAt: ContinuousClock.Instant?
        package var pingID: UInt64 = 0
        package var lastPingAt: ContinuousClock.Instant?
        package var pings = 0
        package var roundTrips: Duration = .zero
        package var sawCloseFrame = false
        /// Set by the client when it ended the connection itself: why, as a trace reason class.
        package var abortReason: String?
        /// The close frame the client sent, if it sent one.
        package var clientClose: (code: Int, reason: String?)?
        package var closeRequestedAt: ContinuousClock.Instant?
        package var end: WebSocketAttemptEnd?
    }

    /// The attempt's number, 1 for the first.
    package let number: Int
    /// The commands, in order; finished when the attempt ends.
    package let commands: AsyncStream<WebSocketCommand>
    private let commandSink: AsyncStream<WebSocketCommand>.Continuation
    private let buffer: WebSocketEventBuffer
    /// Largest message accepted, in bytes.
    package let maximumMessageSize: Int
    package let stats: Locked<Stats>
    private let ending = Locked<CheckedContinuation<WebSocketAttemptEnd, Never>?>(nil)
    private struct PendingSends {
        var open = true
        var next = 0
        var waiting: [Int: CheckedContinuation<Void, any Error>] = [:]
    }
    private let pendingSends = Locked(PendingSends())

    private let notConnected: WebSocketError

    private let onOpen: @Sendable (_ handshakeTime: Duration) -> Void

    init(
        number: Int, buffer: WebSocketEventBuffer, maximumMessageSize: Int, notConnected: WebSocketError,
        onOpen: @escaping @Sendable (_ handshakeTime: Duration) -> Void
    ) {
        self.number = number
        self.onOpen = onOpen
        self.notConnected = notConnected
        self.buffer = buffer
        self.maximumMessageSize = maximumMessageSize
        (commands, commandSink) = AsyncStream.makeStream(of: WebSocketCommand.self)
        stats = Locked(Stats(startedAt: .now))
    }

    // MARK: - Reported by the transport

    /// The handshake succeeded.
    package func opened(_ handshake: WebSocketHandshake) {
        let now = ContinuousClock.now
        let started = stats.withLock {
            $0.openedAt = now
            $0.lastFrameAt = now
            $0.handshake = handshake
            return $0.startedAt
        }
        onOpen(now - started)
        buffer.pushNow(.connected(handshake))
    }

    /// A frame of any kind arrived from the peer: the peer is alive.
    package func sawFrame(isClose: Bool = false) {
        let now = ContinuousClock.now
        stats.withLock { s in
            if let last = s.lastFrameAt, now - last > s.longestSilence { s.longestSilence = now - last }
            s.lastFrameAt = now
            if isClose { s.sawCloseFrame = true }
        }
    }

    /// A pong with this payload arrived; one answering the outstanding ping is a round trip.
    package func pong(_ payload: UInt64) {
        let now = ContinuousClock.now
        let roundTrip: Duration? = stats.withLock { s in
            guard let sent = s.pingSentAt, payload == s.pingID else { return nil }
            s.pingSentAt = nil
            s.pings += 1
            s.roundTrips += now - sent
            return now - sent
        }
        if let roundTrip { buffer.pushNow(.pong(roundTrip: roundTrip)) }
    }

    /// A whole text message arrived; waits while the app's buffer is full.
    package func received(text: String, bytes: Int) async -> Bool {
        count(in: bytes)
        return await buffer.push(.text(text))
    }

    /// A whole binary message arrived; waits while the app's buffer is full.
    package func received(binary: Data) async -> Bool {
        count(in: binary.count)
        return await buffer.push(.binary(binary))
    }

    private func count(in bytes: Int) {
        stats.withLock {
            $0.messagesIn += 1
            $0.bytesIn += Int64(bytes)
        }
    }

    /// A message went out.
    package func wrote(bytes: Int) {
        stats.withLock {
            $0.messagesOut += 1
            $0.bytesOut += Int64(bytes)
        }
    }

    /// The client closes because of something the peer did (a message over the limit, invalid text):
    /// `reason` is the trace's reason class.
    package func clientClosing(code: Int, reason: String) {
        stats.withLock {
            if $0.clientClose == nil { $0.clientClose = (code, nil) }
            if $0.abortReason == nil { $0.abortReason = reason }
        }
    }

    // MARK: - Used by the connection

    /// Whether the app is behind: the transport is not reading, so silence proves nothing.
    var isStalled: Bool { buffer.isStalled }

    /// Sends a text or binary message, returning once it is written (or failed, or the attempt ended).
    func send(text: String? = nil, binary: Data? = nil, notConnected: WebSocketError) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let key: Int? = pendingSends.withLock { p in
                guard p.open else { return nil }
                p.next += 1
                p.waiting[p.next] = continuation
                return p.next
            }
            guard let key else { return continuation.resume(throwing: notConnected) }
            let done: Completion = { [weak self] error in self?.completeSend(key, error) }
            let command: WebSocketCommand = if let text { .text(text, done) } else { .binary(binary ?? Data(), done) }
            if case .terminated = commandSink.yield(command) { completeSend(key, notConnected) }
        }
    }

    private func completeSend(_ key: Int, _ error: (any Error)?) {
        guard let continuation = pendingSends.withLock({ $0.waiting.removeValue(forKey: key) }) else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }

    /// Sends a ping or a close frame.
    func send(_ command: WebSocketCommand) {
        if case .close(let code, let reason) = command {
            stats.withLock {
                if $0.clientClose == nil { $0.clientClose = (code, reason) }
                $0.closeRequestedAt = .now
            }
        }
        commandSink.yield(command)
    }

    /// Ends the attempt with `end` unless it already ended; the first end wins.
    func finish(_ end: WebSocketAttemptEnd) {
        let waiter: CheckedContinuation<WebSocketAttemptEnd, Never>?? = stats.withLock { s in
            guard s.end == nil else { return .none }
            s.end = end
            return .some(ending.withLock { w in defer { w = nil }; return w })
        }
        guard case .some(let continuation) = waiter else { return }
        commandSink.finish()
        // Sends still waiting will never be written: fail them rather than leave the app hanging.
        let stranded = pendingSends.withLock { p in
            p.open = false
            defer { p.waiting = [:] }
            return Array(p.waiting.values)
        }
        for send in stranded { send.resume(throwing: notConnected) }
        continuation?.resume(returning: end)
    }

    /// Waits for ``finish(_:)``.
    func waitForEnd() async -> WebSocketAttemptEnd {
        await withCheckedContinuation { continuation in
            let ended: WebSocketAttemptEnd? = stats.withLock { s in
                if let end = s.end { return end }
                ending.withLock { $0 = continuation }
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }
}
