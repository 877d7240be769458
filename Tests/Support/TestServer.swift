import Foundation
import Hummingbird
import Logging
import NIOCore

/// A real Hummingbird server on 127.0.0.1 (ephemeral port) serving the responses the capture and OpenAPI tests need.
public enum TestServer {
    /// Apps where the second object lacks `stability`, as in the Fabric talk.
    public static let appsJSON = #"{"data":{"apps":[{"id":1,"name":"Otec","stability":0.99},{"id":2,"name":"Fabric"},{"id":3,"name":"Jayme","stability":0.5}]}}"#
    /// Groups of apps: the second app of the second group lacks `stability`.
    public static let groupsJSON = #"{"data":{"groups":[{"apps":[{"id":1,"name":"a","stability":1},{"id":2,"name":"b","stability":1}]},{"apps":[{"id":3,"name":"c","stability":1},{"id":4,"name":"d"}]}]}}"#

    /// Runs the server for the duration of `body`, passing its base URL (`http://127.0.0.1:PORT`).
    public static func run<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
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
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await app.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { throw URLError(.cannotConnectToHost) }
            let result = try await body(URL(string: "http://127.0.0.1:\(port)")!)
            group.cancelAll()
            return result
        }
    }

    private static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
