import APITraceFormat
public import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The event streams of the SSE tests, served by ``TestServer/runSSE(_:)``, with the misbehaviours
/// the client must survive.
///
/// Routes:
/// - `GET /numbers?total=N&drop=K&mode=end|error|partial&retry=MS`: events `id: n` with two-line data
///   `event n` / `line 2`, from `Last-Event-ID` + 1, at most K per connection, with comments between.
///   After K events the connection ends cleanly (`end`), breaks (`error`), or breaks in the middle of
///   an event (`partial`). A request whose `Last-Event-ID` is N gets 204.
/// - `GET /silent`: events 1 and 2, then silence for 20 s; with `Last-Event-ID: 2`, events 3 and 4 and
///   the end; with 4, 204.
/// - `GET /endless`: an event every 20 ms until the client goes away.
/// - `GET /typed`: events of types `news`, `ping` (default `message`), `news`, then 204 on reconnect.
/// - `POST /echo`: one event with the body, the method and the `X-Custom` header, then 204 on reconnect.
/// - `GET /status/{code}`: that status; `GET /flaky?failures=N`: 500 N times, then `/numbers` behaviour.
/// - `GET /wrong-type`: 200 `text/plain`.
///
/// Hostile routes (the server bounds itself with `cap`, so that a client without limits fails its
/// test instead of hanging it):
/// - `GET /hostile/endless-line?cap=MB`: one `data:` line that never ends, in 64 KB writes.
/// - `GET /hostile/never-dispatch?cap=MB`: 1 KB `data:` lines that never end an event.
///   Both count the bytes they wrote in ``SSELog/count(_:)`` under their path.
/// - `GET /hostile/retry-zero`: `retry: 0`, one event, and the end, on every connection.
/// - `GET /hostile/huge-id?bytes=N`: one event whose `id` is N digits, then the end.
/// - `GET /redirect?to=URL&status=302`: a redirect to `to` (absolute or relative).
/// - `GET /redirect-loop`: a 302 to itself, forever.
/// - `GET /headers-stream`: one event; the request's headers are kept in ``SSELog/Request/headers``;
///   204 once `Last-Event-ID` is sent.
extension TestServer {
    /// What the SSE routes saw.
    public final class SSELog: Sendable {
        /// One request as the server saw it.
        public struct Request: Sendable {
            public var path: String
            public var lastEventID: String?
            public var at: ContinuousClock.Instant
            /// Header names lowercased, with their values.
            public var headers: [String: String]
        }

        private let seen = Locked<[Request]>([])
        private let endedStreams = Locked(0)
        private let counters = Locked<[String: Int]>([:])

        func record(_ request: Hummingbird.Request) {
            let id = request.headers[HTTPField.Name("Last-Event-ID")!]
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
            seen.withLock { $0.append(Request(path: request.uri.path, lastEventID: id, at: .now, headers: headers)) }
        }
        /// The requests so far, in order.
        public var requests: [Request] { seen.withLock { $0 } }
        func streamEnded() { endedStreams.withLock { $0 += 1 } }
        /// How many `/endless` streams ended (their client went away).
        public var streamsEnded: Int { endedStreams.withLock { $0 } }
        func next(_ key: String) -> Int { counters.withLock { $0[key, default: 0] += 1; return $0[key]! } }
        func add(_ key: String, _ n: Int) { counters.withLock { $0[key, default: 0] += n } }
        /// A counter kept by a route, such as the bytes a hostile route wrote.
        public func count(_ key: String) -> Int { counters.withLock { $0[key, default: 0] } }
    }

    /// A stream broken on purpose.
    struct SSEDrop: Error {}

    /// Runs the SSE routes for the duration of `body`, passing their base URL and what they saw.
    public static func runSSE<T: Sendable>(_ body: @Sendable (URL, SSELog) async throws -> T) async throws -> T {
        let log = SSELog()
        return try await serve({ addSSERoutes(to: $0, log: log) }) { base in
            let result = try await body(base, log)
            // A client closed mid-request (a redirect, a flood) leaves a response in flight; stopping the
            // server under it trips NIO's "Deinited NIOAsyncWriter without calling finish()". Let the
            // last connections wind down first: until no request came for 300 ms, 2 s at most. (A
            // connection the kernel accepted but the shared event loop had not yet seen can still
            // arrive later; this makes that rare, it cannot rule it out.)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(2)
            var seen = log.requests.count
            while clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(300))
                let now = log.requests.count
                if now == seen { break }
                seen = now
            }
            return result
        }
    }

    static func eventStream(_ write: @escaping @Sendable (inout any ResponseBodyWriter) async throws -> Void) -> Response {
        Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: ResponseBody { writer in
            try await write(&writer)
            try await writer.finish(nil)
        })
    }

    static func addSSERoutes(to router: Router<BasicRequestContext>, log: SSELog) {
        router.get("numbers") { request, _ in
            log.record(request)
            return numbers(request, log: log)
        }
        router.get("flaky") { request, _ in
            log.record(request)
            let failures = request.uri.queryParameters.get("failures", as: Int.self) ?? 2
            if log.next("flaky") <= failures { return Response(status: .internalServerError) }
            return numbers(request, log: log)
        }
        router.get("silent") { request, _ in
            log.record(request)
            let last = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { Int($0) } ?? 0
            if last >= 4 { return Response(status: .noContent) }
            return eventStream { writer in
                if last < 2 {
                    try await writer.write(ByteBuffer(string: "id: 1\ndata: one\n\nid: 2\ndata: two\n\n"))
                    try? await Task.sleep(for: .seconds(20))
                } else {
                    try await writer.write(ByteBuffer(string: "id: 3\ndata: three\n\nid: 4\ndata: four\n\n"))
                }
            }
        }
        router.get("endless") { request, _ in
            log.record(request)
            return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
                defer { log.streamEnded() }
                var n = 0
                while !Task.isCancelled {
                    n += 1
                    try await writer.write(ByteBuffer(string: "id: \(n)\ndata: tick \(n)\n\n"))
                    try await Task.sleep(for: .milliseconds(20))
                }
            })
        }
        router.get("typed") { request, _ in
            log.record(request)
            if request.headers[HTTPField.Name("Last-Event-ID")!] != nil { return Response(status: .noContent) }
            return eventStream { writer in
                try await writer.write(ByteBuffer(string: "event: news\nid: 1\ndata: a\n\ndata: b\nid: 2\n\nevent: news\nid: 3\ndata: c\n\n"))
            }
        }
        router.post("echo") { request, _ in
            log.record(request)
            if request.headers[HTTPField.Name("Last-Event-ID")!] != nil { return Response(status: .noContent) }
            let body = try await String(buffer: request.body.collect(upTo: 1 << 16))
            let custom = request.headers[HTTPField.Name("X-Custom")!] ?? "-"
            return eventStream { writer in
                try await writer.write(ByteBuffer(string: "id: 1\ndata: \(request.method.rawValue) \(body) \(custom)\n\n"))
            }
        }
        router.get("status/:code") { request, context in
            log.record(request)
            let code = context.parameters.get("code", as: Int.self) ?? 500
            return Response(status: .init(code: code), body: ResponseBody(byteBuffer: ByteBuffer(string: "no\n")))
        }
        addHostileSSERoutes(to: router, log: log)
        router.get("wrong-type") { request, _ in
            log.record(request)
            return Response(status: .ok, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(string: "data: x\n\n")))
        }
    }

    /// The `/numbers` stream: see the routes above.
    static func numbers(_ request: Request, log: SSELog) -> Response {
        let query = request.uri.queryParameters
        let total = query.get("total", as: Int.self) ?? 12
        let drop = query.get("drop", as: Int.self) ?? 5
        let mode = query.get("mode") ?? "end"
        let retry = query.get("retry", as: Int.self) ?? 40
        let last = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { Int($0) } ?? 0
        if last >= total { return Response(status: .noContent) }
        return eventStream { writer in
            try await writer.write(ByteBuffer(string: ": hello\nretry: \(retry)\n\n"))
            let end = min(last + drop, total)
            for n in (last + 1)...end {
                // Split inside a line so the client's parser sees events across chunks.
                try await writer.write(ByteBuffer(string: "id: \(n)\r\ndata: event \(n)\r\nda"))
                try await Task.sleep(for: .milliseconds(1))
                try await writer.write(ByteBuffer(string: "ta: line 2\r\n\r\n: keep-alive\n"))
            }
            switch mode {
            case "error":
                throw SSEDrop()
            case "partial":
                try await writer.write(ByteBuffer(string: "id: \(end + 1)\ndata: half an event\n"))
                try await Task.sleep(for: .milliseconds(5))
                throw SSEDrop()
            default:
                return
            }
        }
    }
}

extension TestServer {
    static func addHostileSSERoutes(to router: Router<BasicRequestContext>, log: SSELog) {
        /// Writes `head`, then `chunk` until the client goes away or `cap` MB went out.
        @Sendable func flood(_ request: Request, head: String, chunk: String) -> Response {
            let path = request.uri.path
            let cap = (request.uri.queryParameters.get("cap", as: Int.self) ?? 512) << 20
            return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
                defer { log.streamEnded() }
                try await writer.write(ByteBuffer(string: head))
                let buffer = ByteBuffer(string: chunk)
                var written = 0
                while written < cap, !Task.isCancelled {
                    try await writer.write(buffer)
                    written += buffer.readableBytes
                    log.add(path, buffer.readableBytes)
                }
                try await writer.finish(nil)
            })
        }
        router.get("hostile/endless-line") { request, _ in
            log.record(request)
            return flood(request, head: "retry: 1\ndata: ", chunk: String(repeating: "x", count: 1 << 16))
        }
        router.get("hostile/never-dispatch") { request, _ in
            log.record(request)
            let line = "data: " + String(repeating: "y", count: 1018) + "\n"
            return flood(request, head: "retry: 1\n", chunk: String(repeating: line, count: 64))
        }
        router.get("hostile/retry-zero") { request, _ in
            log.record(request)
            return eventStream { writer in
                try await writer.write(ByteBuffer(string: "retry: 0\nid: \(log.next("retry-zero"))\ndata: hi\n\n"))
            }
        }
        router.get("hostile/huge-id") { request, _ in
            log.record(request)
            let bytes = request.uri.queryParameters.get("bytes", as: Int.self) ?? 1000
            return eventStream { writer in
                var buffer = ByteBuffer(string: "retry: 1\nid: ")
                buffer.writeRepeatingByte(UInt8(ascii: "7"), count: bytes)
                buffer.writeString("\ndata: x\n\n")
                try await writer.write(buffer)
            }
        }
        router.get("redirect") { request, _ in
            log.record(request)
            let query = request.uri.queryParameters
            let status = query.get("status", as: Int.self) ?? 302
            return Response(status: .init(code: status), headers: [.location: query.get("to") ?? "/"])
        }
        router.get("redirect-loop") { request, _ in
            log.record(request)
            return Response(status: .found, headers: [.location: "/redirect-loop"])
        }
        router.get("headers-stream") { request, _ in
            log.record(request)
            if request.headers[HTTPField.Name("Last-Event-ID")!] != nil { return Response(status: .noContent) }
            return eventStream { writer in try await writer.write(ByteBuffer(string: "id: 1\ndata: ok\n\n")) }
        }
    }
}
