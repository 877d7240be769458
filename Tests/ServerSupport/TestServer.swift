public import Foundation
public import Hummingbird
import APITraceTestSupport
import Logging
import NIOCore

/// The tests' one HTTP server: a real Hummingbird server on 127.0.0.1 (ephemeral port) for the duration
/// of a test body. ``serve(_:_:)`` takes any routes; ``run(_:)`` serves the JSON API the capture and
/// OpenAPI tests read, ``runSSE(_:)`` the event streams of the SSE tests, and ``Receiver`` records what
/// notifiers post.
public enum TestServer {
    /// Apps where the second object lacks `stability`, as in the Fabric talk.
    public static let appsJSON = #"{"data":{"apps":[{"id":1,"name":"Otec","stability":0.99},{"id":2,"name":"Fabric"},{"id":3,"name":"Jayme","stability":0.5}]}}"#
    /// Groups of apps: the second app of the second group lacks `stability`.
    public static let groupsJSON = #"{"data":{"groups":[{"apps":[{"id":1,"name":"a","stability":1},{"id":2,"name":"b","stability":1}]},{"apps":[{"id":3,"name":"c","stability":1},{"id":4,"name":"d"}]}]}}"#

    /// The server did not report a port.
    public struct DidNotStart: Error {}

    /// Serves the routes `configure` adds for the duration of `body`, passing its base URL
    /// (`http://127.0.0.1:PORT`); stops the server when `body` returns or throws.
    public static func serve<T: Sendable>(
        _ configure: (Router<BasicRequestContext>) -> Void, _ body: @Sendable (URL) async throws -> T
    ) async throws -> T {
        let router = Router()
        configure(router)
        // Quiet: cancelling the server at the end of a test logs an "error" that is not one.
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask(executorPreference: ServerExecutor.shared) { try await app.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { throw DidNotStart() }
            return try await body(URL(string: "http://127.0.0.1:\(port)")!)
        }
    }

    /// Runs the JSON API for the duration of `body`, passing its base URL (`http://127.0.0.1:PORT`).
    public static func run<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        try await serve(addAPIRoutes, body)
    }

    static func addAPIRoutes(to router: Router<BasicRequestContext>) {
        router.get("/apps") { _, _ in json(appsJSON) }
        router.get("/groups") { _, _ in json(groupsJSON) }
        router.get("/apps/:id") { _, context in
            let id = context.parameters.get("id") ?? "0"
            return json(#"{"id":\#(id),"name":"Otec","stability":0.9}"#)
        }
        router.get("/fail") { _, _ in json(#"{"error":"boom"}"#, status: .internalServerError) }
        router.get("/slow") { _, _ in
            try await Task.sleep(for: .seconds(5))
            return json("{}")
        }
        router.post("/echo") { request, _ in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            return json(#"{"received":\#(buffer.readableBytes)}"#)
        }
        router.get("/headers") { request, _ in
            var fields: [String: String] = [:]
            for field in request.headers { fields[field.name.canonicalName] = field.value }
            let data = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
            return json(String(decoding: data, as: UTF8.self))
        }
    }

    private static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
