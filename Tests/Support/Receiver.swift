import APITraceFormat
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// A ``TestServer`` standing in for PagerDuty, Slack and webhook
/// endpoints: it records every POST and answers from a script (default: each service's success).
public final class Receiver: @unchecked Sendable {
    public struct Received: Sendable {
        public var path: String
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

        public init(status: Int, headers: [String: String] = [:], body: String, delay: Duration = .zero) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }
    }

    private struct State {
        var received: [Received] = []
        var script: [String: [Reply]] = [:]
        var sizeLimits: [String: (bytes: Int, reply: Reply)] = [:]
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

    /// Runs `body` with the receiver listening; stops it afterwards.
    public static func with<T: Sendable>(_ body: @Sendable (Receiver) async throws -> T) async throws -> T {
        let receiver = Receiver()
        return try await TestServer.serve({ router in
            router.post("**") { request, context -> Response in
                let bytes = try await request.body.collect(upTo: 4 << 20)
                let path = request.uri.path
                receiver.state.withLock {
                    $0.received.append(Received(path: path, contentType: request.headers[.contentType], body: Data(bytes.readableBytesView)))
                }
                let reply = receiver.reply(for: path, size: bytes.readableBytes)
                if reply.delay > .zero { try? await Task.sleep(for: reply.delay) }
                var headers = HTTPFields()
                for (name, value) in reply.headers { headers[HTTPField.Name(name)!] = value }
                return Response(status: .init(code: reply.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: reply.body)))
            }
        }) { base in
            receiver.port = base.port ?? 0
            return try await body(receiver)
        }
    }
}
