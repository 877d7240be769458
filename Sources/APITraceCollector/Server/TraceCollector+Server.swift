import Hummingbird
import Logging
import NIOCore

extension TraceCollector {
    /// Serves the collector on `host:port` until SIGTERM or SIGINT (graceful), or the task is cancelled.
    ///
    /// `onListening` gets the bound port (useful with port 0).
    public func run(
        host: String, port: Int, logger: Logger = Logger(label: "apitrace.collector"),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let router = Router()
        addRoutes(to: router)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "apitrace-collector"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
        try await app.runService()
    }
}
