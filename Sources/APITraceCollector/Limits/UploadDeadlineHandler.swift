import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client is too slow: a request head not complete within
/// ``TraceCollector/Configuration/headerTimeout`` (from the connection's start or the end of the
/// previous response), a body that makes no progress for ``TraceCollector/Configuration/bodyIdleTimeout``,
/// a body bringing less than ``TraceCollector/Configuration/minBodyBytesPerSecond`` over a
/// ``TraceCollector/Configuration/bodyRateWindow``, or a body not complete within
/// ``TraceCollector/Configuration/bodyTimeout``.
///
/// Deadlines rather than idle timers for the head and the whole body: a client dribbling one
/// byte a second never lets an idle timer fire, but it cannot stretch a deadline. The rate
/// window cuts such a client off long before the body deadline, so a handful of them holding a
/// valid token cannot keep upload slots for minutes.
///
/// When the server shuts down (`ChannelShouldQuiesceEvent`), a body still arriving gets
/// ``TraceCollector/Configuration/shutdownGrace`` to finish; then the connection is closed, so a
/// dribbling client cannot hold the process after SIGTERM. Uploads whose body is in are left to
/// finish storing and answer.
final class UploadDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What the connection is waiting for.
    private enum Phase {
        /// The next request head, due by `deadline`.
        case head(deadline: NIODeadline)
        /// The rest of a body: progress due by `lastProgress + bodyIdle`, all of it by `deadline`.
        case body(lastProgress: NIODeadline, deadline: NIODeadline)
        /// The collector's response: its own time is not the client's fault.
        case responding
    }

    private let headerTimeout: TimeAmount
    private let bodyIdleTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let minBodyBytesPerSecond: Int
    private let rateWindow: TimeAmount
    private let shutdownGrace: TimeAmount
    /// Start of the current rate window, and body bytes received in it.
    private var windowStart: NIODeadline = .now()
    private var windowBytes = 0
    /// The pipeline asked for more bytes and none came yet. While nothing asks (the collector's own
    /// consumer is behind: backpressure), a slow window is the collector's doing, not the client's.
    private var readOutstanding = false
    /// Set when the server began to shut down: bodies still arriving are cut at this instant.
    private var drainDeadline: NIODeadline?
    private let onTimeout: @Sendable (TimedOutPhase) -> Void
    private let onShutdown: @Sendable () -> Void
    private var phase: Phase = .responding
    private var timer: Scheduled<Void>?
    /// The collector answered the current request (it may answer before the body ends: 401, 413, 503).
    private var answered = false
    /// A byte of the next request came since the connection opened or the last answer: a head
    /// deadline missed with none is an idle kept-alive connection, not a slow client.
    private var bytesSinceAnswer = false

    /// Which deadline a closed connection missed, for the metrics.
    enum TimedOutPhase: String, Sendable, CaseIterable {
        /// No byte of a request came (a kept-alive connection left unused, or one opened and never used).
        case idle
        /// A request head was started but not completed in time (a slow or malicious client).
        case header
        case bodyIdle = "body_idle"
        /// A body brought less than the minimum rate over a rate window (a dribbling client).
        case bodyRate = "body_rate"
        case body
        /// The server shut down while the body was still arriving, and it did not finish within the grace.
        case shutdown
    }

    init(
        headerTimeout: TimeAmount, bodyIdleTimeout: TimeAmount, bodyTimeout: TimeAmount,
        minBodyBytesPerSecond: Int, rateWindow: TimeAmount, shutdownGrace: TimeAmount,
        onShutdown: @escaping @Sendable () -> Void = {},
        onTimeout: @escaping @Sendable (TimedOutPhase) -> Void
    ) {
        self.onShutdown = onShutdown
        self.headerTimeout = headerTimeout
        self.bodyIdleTimeout = bodyIdleTimeout
        self.bodyTimeout = bodyTimeout
        self.minBodyBytesPerSecond = minBodyBytesPerSecond
        self.rateWindow = rateWindow
        self.shutdownGrace = shutdownGrace
        self.onTimeout = onTimeout
    }

    /// Body bytes a rate window must bring.
    private var windowMinimum: Int {
        Int((Double(minBodyBytesPerSecond) * Double(rateWindow.nanoseconds) / 1e9).rounded(.up))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Bytes are seen before the HTTP decoder, which passes nothing on until a head is complete.
        try? context.pipeline.syncOperations.addHandler(ByteArrivalMarker { [weak self] in self?.bytesSinceAnswer = true }, position: .first)
        if context.channel.isActive { waitForHead(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if case .responding = phase, timer == nil { waitForHead(context) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        readOutstanding = true
        context.read()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readOutstanding = false
        context.fireChannelReadComplete()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            answered = false
            let now = NIODeadline.now()
            phase = .body(lastProgress: now, deadline: now + bodyTimeout)
            windowStart = now
            windowBytes = 0
            schedule(context)
        case .body(let bytes):
            if case .body(_, let deadline) = phase {
                phase = .body(lastProgress: .now(), deadline: deadline)
                windowBytes += bytes.readableBytes
            }
        case .end:
            phase = .responding
            timer?.cancel()
            timer = nil
            if answered { waitForHead(context) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            answered = true
            // After an early answer the client may still be sending its body: its deadlines still run.
            if case .responding = phase { waitForHead(context) }
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, drainDeadline == nil {
            drainDeadline = .now() + shutdownGrace
            onShutdown()
            // Hummingbird closes connections with no request in progress and closes the others
            // after their response; only a body still arriving needs a deadline of its own.
            if case .body = phase { schedule(context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func waitForHead(_ context: ChannelHandlerContext) {
        bytesSinceAnswer = false
        phase = .head(deadline: .now() + headerTimeout)
        schedule(context)
    }

    /// Arms one timer for the nearest deadline of the current phase.
    private func schedule(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let due: NIODeadline
        switch phase {
        case .head(let deadline): due = deadline
        case .body(let lastProgress, let deadline):
            due = min(lastProgress + bodyIdleTimeout, deadline, minBodyBytesPerSecond > 0 ? windowStart + rateWindow : deadline, drainDeadline ?? deadline)
        case .responding: timer = nil; return
        }
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        timer = loop.scheduleTask(deadline: due) { [self] in
            timer = nil
            let now = NIODeadline.now()
            switch phase {
            case .head(let deadline) where now >= deadline:
                close(context, bytesSinceAnswer ? .header : .idle)
            case .body(_, let deadline) where now >= deadline:
                close(context, .body)
            case .body where drainDeadline.map { now >= $0 } ?? false:
                close(context, .shutdown)
            case .body(let lastProgress, _) where now >= lastProgress + bodyIdleTimeout:
                close(context, .bodyIdle)
            case .body where minBodyBytesPerSecond > 0 && now >= windowStart + rateWindow:
                if windowBytes < windowMinimum, readOutstanding {
                    close(context, .bodyRate)
                } else {
                    windowStart = now
                    windowBytes = 0
                    schedule(context)
                }
            case .head, .body:
                schedule(context)
            case .responding:
                break
            }
        }
    }

    private func close(_ context: ChannelHandlerContext, _ missed: TimedOutPhase) {
        onTimeout(missed)
        context.close(promise: nil)
    }
}

/// Tells the deadline handler that bytes arrived, from the front of the pipeline.
private final class ByteArrivalMarker: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let onBytes: () -> Void

    init(_ onBytes: @escaping () -> Void) { self.onBytes = onBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        onBytes()
        context.fireChannelRead(data)
    }
}
