import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Live comments on a news item over a WebSocket (`ws://host:port/news/{id}/comments`), with the
/// sample server's faults: connections dropped without a close frame, closed with 1011, and pings
/// answered late.
///
/// Connections take turns at the faults: the first is dropped after
/// ``NewsServerFaults/commentsDropAfter`` comments, the second closed with 1011 after
/// ``NewsServerFaults/commentsErrorAfter``, the third stays up; pongs are late on all of them.
/// Each connection receives one comment (`{"news":42,"comment":7,"text":"..."}`) every
/// ``interval``. A separate listener beside the REST and SSE application: Hummingbird's own
/// WebSocket support lives in a package this one does not depend on, and SwiftNIO's upgrader (which
/// the package already builds) is all a sample server needs.
public struct NewsCommentsServer: Sendable {
    /// Faults to inject (``NewsServerFaults/commentsDropAfter``, ``NewsServerFaults/commentsErrorAfter``,
    /// ``NewsServerFaults/commentsPongDelay``).
    public var faults: NewsServerFaults
    /// Time between two comments.
    public var interval: Duration

    /// Creates a server description.
    public init(faults: NewsServerFaults = .none, interval: Duration = .milliseconds(150)) {
        self.faults = faults
        self.interval = interval
    }

    /// A running listener.
    public struct Running: Sendable {
        /// The bound port.
        public let port: Int
        let channel: any Channel

        /// Stops listening (open connections end with it).
        public func stop() async {
            try? await channel.close()
        }
    }

    /// Starts listening on `host:port` (0: any free port).
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Running {
        let faults = self.faults, interval = self.interval
        let connections = ConnectionCounter()
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: 1 << 16,
            shouldUpgrade: { channel, head in
                channel.eventLoop.makeSucceededFuture(Self.newsID(inPath: head.uri) == nil ? nil : HTTPHeaders())
            },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        CommentsHandler(newsID: Self.newsID(inPath: head.uri) ?? 0, faults: faults, turn: connections.next() % 3, interval: interval))
                }
            })
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: host, port: port).get()
        return Running(port: channel.localAddress?.port ?? port, channel: channel)
    }

    /// The id in `/news/{id}/comments`, or nil for any other path.
    static func newsID(inPath path: String) -> Int? {
        let parts = path.split(separator: "?").first?.split(separator: "/") ?? []
        guard parts.count == 3, parts[0] == "news", parts[2] == "comments" else { return nil }
        return Int(parts[1])
    }
}

/// One connection: comments on a timer, pongs (late when asked to), the faults.
private final class CommentsHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let newsID: Int
    let dropAfter: Int?
    let errorAfter: Int?
    let pongDelay: Duration?
    let interval: Duration
    var sent = 0
    var timer: RepeatedTask?
    var closing = false

    init(newsID: Int, faults: NewsServerFaults, turn: Int, interval: Duration) {
        self.newsID = newsID
        dropAfter = turn == 0 ? faults.commentsDropAfter : nil
        errorAfter = turn == 1 ? faults.commentsErrorAfter : nil
        pongDelay = faults.commentsPongDelay
        self.interval = interval
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let every = TimeAmount.nanoseconds(Int64(interval.components.seconds) * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: every, delay: every) { _ in
            let (handler, context) = bound.value
            handler.tick(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func tick(context: ChannelHandlerContext) {
        guard !closing else { return }
        if let drop = dropAfter, sent >= drop {
            // No close frame: the client sees the TCP connection end (1006).
            closing = true
            context.close(promise: nil)
            return
        }
        if let error = errorAfter, sent >= error {
            closing = true
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: .unexpectedServerError)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)), promise: nil)
            return
        }
        sent += 1
        let text = #"{"news":\#(newsID),"comment":\#(sent),"text":"comment \#(sent) on news \#(newsID)"}"#
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(string: text))), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            if let delay = pongDelay {
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let wait = TimeAmount.nanoseconds(Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
                context.eventLoop.scheduleTask(in: wait) {
                    let (handler, context) = bound.value
                    context.writeAndFlush(handler.wrapOutboundOut(pong), promise: nil)
                }
            } else {
                context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
            }
        case .connectionClose:
            if closing {
                // The answer to our 1011: the handshake is done.
                context.close(promise: nil)
                return
            }
            closing = true
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode() ?? .normalClosure
            var reply = context.channel.allocator.buffer(capacity: 2)
            reply.write(webSocketErrorCode: code)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: reply))).whenComplete { _ in }
            context.close(promise: nil)
        default:
            break
        }
    }
}

/// Numbers connections, so they take turns at the faults.
private final class ConnectionCounter: @unchecked Sendable {
    private var count = 0
    private let lock = NSLock()

    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        count += 1
        return count - 1
    }
}
