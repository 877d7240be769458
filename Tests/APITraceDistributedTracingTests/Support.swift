import APITraceCapture
import Foundation
import Hummingbird
import Logging
import OtecNewsServer

/// Runs the sample news server on 127.0.0.1 for the duration of `body`.
func withNewsServer<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var quiet = Logger(label: "otec-news-server")
    quiet.logLevel = .critical
    let server = NewsServer().application(port: 0, logger: quiet) { port in continuation.yield(port) }
    let task = Task { try await server.run() }
    defer { task.cancel() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw URLError(.cannotConnectToHost) }
    return try await body(port)
}

func isTraceID(_ text: String?) -> Bool {
    guard let text else { return false }
    return text.count == 32 && text.allSatisfy(\.isHexDigit) && text != String(repeating: "0", count: 32)
}
