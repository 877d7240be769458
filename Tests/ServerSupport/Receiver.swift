import APITraceFormat
public import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// A ``TestServer`` standing in for PagerDuty, Slack and webhook
/// endpoints: it records every POST and answers from a script (default: each service's success).
///
/// Replies can be hostile (``Reply/Stream``): an endless body, a huge one, a byte dripped every few
/// seconds, a hang, a redirect (any status with a `Location` header), and bodies that echo what was
/// sent (`{path}` and `{body}` in a reply's body are replaced by the request's path and body) or
/// carry terminal escape sequences.
public final class Receiver: @unchecked Sendable {
    public struct Received: Sendable {
        /// `POST`, or `GET` for a client that turned the POST into a GET (a followed 301, 302 or 303).
        public var method: String
        public var path: String
        /// The query, if the request had one.
        public var query: String?
        /// When it arrived.
        public var at: ContinuousClock.Instant
        public var contentType: String?
        public var body: Data
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    public struct Reply: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        /// Wait this long before answering (a receiver that hangs).
        public var delay: Duration
        /// How the body goes out after `body`.
        public var stream: Stream

        /// A body beyond the reply's text.
        public enum Stream: Sendable {
            /// Just `body`.
            case none
            /// `body`, then 64 KB chunks for ever (until the client goes away).
            case endless
            /// `body`, then this many bytes in 64 KB chunks, with a `Content-Length`.
            case huge(bytes: Int)
            /// `body`, then one byte every `interval`, for ever.
            case drip(every: Duration)
        }

        public init(status: Int, headers: [String: String] = [:], body: String, delay: Duration = .zero, stream: Stream = .none) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.stream = stream
        }

        /// A receiver that never answers (for `seconds`).
        public static func hang(_ seconds: Int64 = 3600) -> Reply { Reply(status: 200, body: "{}", delay: .seconds(seconds)) }

        /// A redirect to `location`.
        public static func redirect(_ status: Int, to location: String) -> Reply {
            Reply(status: status, headers: ["Location": location], body: "moved to \(location)")
        }
    }

    /// How many bytes of streamed bodies the receiver wrote (the client took them, or the kernel buffered them).
    public var streamedBytes: Int { state.withLock { $0.streamed } }

    private struct State {
        var received: [Received] = []
        var script: [String: [Reply]] = [:]
        var sizeLimits: [String: (bytes: Int, reply: Reply)] = [:]
        var streamed = 0
    }

    private let state = Locked(State())
    public private(set) var port = 0

    /// Requests received so far, in order.
    public var requests: [Received] { state.withLock { $0.received } }
    public func requests(to path: String) -> [Received] { requests.filter { $0.path == path } }

    /// Answers the next requests to `path` with these replies, then the default.
    public func script(_ path: String, _ replies: [Reply]) { state.withLock { $0.script[path, default: []] += replies } }

    /// Answers every request to `path` whose body is larger than `bytes` with `reply` (a service's 400 or 413).
    public func refuseBodies(to path: String, largerThan bytes: Int, with reply: Reply) { state.withLock { $0.sizeLimits[path] = (bytes, reply) } }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    private func reply(for path: String, size: Int) -> Reply {
        state.withLock { state in
            if let limit = state.sizeLimits[path], size > limit.bytes { return limit.reply }
            if var queue = state.script[path], !queue.isEmpty {
                let next = queue.removeFirst()
                state.script[path] = queue
                return next
            }
            if path.hasPrefix("/slack") { return Reply(status: 200, body: "ok") }
            if path.hasPrefix("/v2/enqueue") { return Reply(status: 202, body: #"{"status":"success","message":"Event processed"}"#) }
            return Reply(status: 200, body: "{}")
        }
    }

    private func streamed(_ head: String, _ stream: Reply.Stream) -> ResponseBody {
        let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 65_536)
        var length: Int?
        if case .huge(let bytes) = stream { length = head.utf8.count + bytes }
        return ResponseBody(contentLength: length) { writer in
            try await writer.write(ByteBuffer(string: head))
            switch stream {
            case .none: break
            case .endless:
                while !Task.isCancelled {
                    try await writer.write(chunk)
                    self.state.withLock { $0.streamed += chunk.readableBytes }
                }
            case .huge(let bytes):
                var left = bytes
                while left > 0, !Task.isCancelled {
                    let n = min(left, chunk.readableBytes)
                    try await writer.write(chunk.getSlice(at: 0, length: n)!)
                    self.state.withLock { $0.streamed += n }
                    left -= n
                }
            case .drip(let interval):
                while !Task.isCancelled {
                    try await writer.write(ByteBuffer(string: "."))
                    self.state.withLock { $0.streamed += 1 }
                    try await Task.sleep(for: interval)
                }
            }
            try await writer.finish(nil)
        }
    }

    /// Runs `body` with the receiver listening; stops it afterwards.
    public static func with<T: Sendable>(_ body: @Sendable (Receiver) async throws -> T) async throws -> T {
        let receiver = Receiver()
        return try await TestServer.serve({ router in
            let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
                let bytes = try await request.body.collect(upTo: 4 << 20)
                _ = context
                let path = request.uri.path
                receiver.state.withLock {
                    $0.received.append(Received(method: request.method.rawValue, path: path, query: request.uri.query, at: .now, contentType: request.headers[.contentType], body: Data(bytes.readableBytesView)))
                }
                let reply = receiver.reply(for: path, size: bytes.readableBytes)
                if reply.delay > .zero { try? await Task.sleep(for: reply.delay) }
                var headers = HTTPFields()
                for (name, value) in reply.headers { headers[HTTPField.Name(name)!] = value }
                let text = reply.body.replacingOccurrences(of: "{path}", with: path)
                    .replacingOccurrences(of: "{body}", with: String(decoding: bytes.readableBytesView, as: UTF8.self))
                switch reply.stream {
                case .none:
                    return Response(status: .init(code: reply.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
                case .endless, .huge, .drip:
                    return Response(status: .init(code: reply.status), headers: headers, body: receiver.streamed(text, reply.stream))
                }
            }
            router.post("**", use: handler)
            router.get("**", use: handler)
        }) { base in
            receiver.port = base.port ?? 0
            return try await body(receiver)
        }
    }
}
