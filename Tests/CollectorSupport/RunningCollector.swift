public import APITraceCollector
public import Hummingbird
import APITraceTestSupport
import Logging
import NIOCore

/// The real collector served by Hummingbird on 127.0.0.1 inside the test process.
public final class RunningCollector: Sendable {
    public let collector: TraceCollector
    public let port: Int
    private let task: Task<Void, any Error>

    public var uploadURL: String { "http://127.0.0.1:\(port)/v1/traces" }
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(collector: TraceCollector, port: Int, task: Task<Void, any Error>) {
        self.collector = collector
        self.port = port
        self.task = task
    }

    public struct DidNotStart: Error {}

    /// Starts serving `collector` (port 0: an ephemeral one). `configure` can add middleware before the routes.
    public static func start(
        _ collector: TraceCollector, port: Int = 0,
        configure: (Router<BasicRequestContext>) -> Void = { _ in }
    ) async throws -> RunningCollector {
        let router = Router()
        configure(router)
        collector.addRoutes(to: router)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "test-collector")
        logger.logLevel = .critical
        let app = Application(
            router: router, server: collector.httpServer, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? -1) },
            logger: logger)
        // On the servers' own threads: see ``ServerExecutor``.
        let task = Task(executorPreference: ServerExecutor.shared) {
            defer { continuation.finish() }
            try await app.run()
        }
        for await bound in ports { return RunningCollector(collector: collector, port: bound, task: task) }
        try await task.value
        throw DidNotStart()
    }

    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
