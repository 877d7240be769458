import Foundation
import Hummingbird
public import HummingbirdCore
public import Logging
import NIOCore

extension TraceCollector {
    /// Serves the collector on `host:port` until SIGTERM or SIGINT (graceful), or the task is cancelled.
    ///
    /// On SIGTERM or SIGINT the collector stops accepting connections, closes idle ones, gives
    /// bodies still arriving ``Configuration/shutdownGrace`` to finish, lets the uploads being
    /// stored finish and answers those still waiting for a store thread `503` with `Retry-After`;
    /// then it returns.
    ///
    /// `onListening` gets the bound port (useful with port 0). Without a `logger`, one at the
    /// level named by `$LOG_LEVEL` (Hummingbird's convention; default `info`) is used.
    public func run(
        host: String, port: Int, logger: Logger? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let logger = logger ?? {
            var logger = Logger(label: "apitrace.collector")
            logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
            return logger
        }()
        let router = Router()
        addRoutes(to: router)
        let app = Application(
            router: router,
            server: httpServer,
            configuration: .init(address: .hostname(host, port: port), serverName: "apitrace-collector"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
        // Open files of producers that went quiet are sealed, so that they are cached like the rest.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            group.addTask {
                while !Task.isCancelled {
                    _ = self.store.sealIdle(olderThan: TraceStore.idleSealSeconds)
                    try await Task.sleep(for: .seconds(TraceStore.idleSweepSeconds))
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// The HTTP/1.1 server with the collector's deadlines for slow clients (see ``Configuration/headerTimeout``);
    /// give it to Hummingbird's `Application(router:server:)` when serving ``addRoutes(to:path:)`` yourself.
    public var httpServer: HTTPServerBuilder {
        let configuration = configuration
        let metrics = metrics
        return .http1(configuration: .init(
            additionalChannelHandlers: [
                UploadDeadlineHandler(
                    headerTimeout: Self.timeAmount(configuration.headerTimeout),
                    bodyIdleTimeout: Self.timeAmount(configuration.bodyIdleTimeout),
                    bodyTimeout: Self.timeAmount(configuration.bodyTimeout),
                    minBodyBytesPerSecond: configuration.minBodyBytesPerSecond,
                    rateWindow: Self.timeAmount(configuration.bodyRateWindow),
                    shutdownGrace: Self.timeAmount(configuration.shutdownGrace),
                    onShutdown: { [weak self] in self?.beginDraining() },
                    onTimeout: { metrics.recordTimedOut($0) })
            ]))
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
