import Foundation
public import Hummingbird
public import Logging
import NIOCore

/// A sample API in the spirit of the Otec news app's server: REST endpoints for newspapers and news,
/// a Server-Sent Events stream of new items, and a Fabric-like apps endpoint, with injectable faults.
///
/// Routes:
/// - `GET /newspapers`, `GET /newspapers/{id}/news`, `GET /news/{id}`
/// - `GET /apps` (`{"data":{"apps":[...]}}`), `GET /apps/{id}/issues`
/// - `GET /news/stream`: `text/event-stream`, one item every ``sseInterval``, ids resume after `Last-Event-ID`
/// - `GET /health`
public struct NewsServer: Sendable {
    /// Faults to inject.
    public var faults: NewsServerFaults
    /// Time between two SSE items.
    public var sseInterval: Duration
    /// Seed for the fault dice, so runs repeat.
    public var seed: UInt64

    /// Creates a server description.
    public init(faults: NewsServerFaults = .none, sseInterval: Duration = .milliseconds(200), seed: UInt64 = 1) {
        self.faults = faults
        self.sseInterval = sseInterval
        self.seed = seed
    }

    /// Builds the Hummingbird application listening on `host:port` (port 0 picks a free port;
    /// `onRunning` receives the bound port).
    public func application(
        host: String = "127.0.0.1", port: Int = 0, logger: Logger = Logger(label: "otec-news-server"),
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        let dice = FaultDice(seed: seed)
        let started = ContinuousClock.now
        let faults = self.faults
        let interval = sseInterval

        @Sendable func injectFaults() async throws -> Response? {
            let elapsed = ContinuousClock.now - started
            let errorRate = faults.spike.map { $0.contains(elapsed) } == true ? faults.spikeErrorRate : faults.serverErrorRate
            if dice.roll(errorRate) {
                return Response(status: dice.roll(0.5) ? .internalServerError : .serviceUnavailable,
                                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"injected"}"#)))
            }
            if dice.roll(faults.slowRate) { try await Task.sleep(for: faults.slowDelay) }
            return nil
        }

        router.get("/health") { _, _ in "ok" }
        router.get("/newspapers") { _, _ in
            if let fault = try await injectFaults() { return fault }
            return json(["data": NewsCatalog.newspapers()])
        }
        router.get("/newspapers/{id}/news") { _, context in
            if let fault = try await injectFaults() { return fault }
            guard let id = context.parameters.get("id", as: Int.self), (1...5).contains(id) else { return notFound() }
            return json(["data": (0..<8).map { NewsCatalog.news(id: id * 100 + $0) }])
        }
        router.get("/news/stream") { request, _ in
            let last = request.headers[.init("Last-Event-ID")!].flatMap { Int($0) } ?? 0
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "retry: 300\n: stream of news\n\n"))
                var sent = 0
                var id = last
                while true {
                    if let drop = faults.sseDropAfter, sent >= drop { throw CancellationError() }
                    if let silence = faults.sseSilenceAfter, sent >= silence {
                        try await Task.sleep(for: .seconds(3600))
                    }
                    try await Task.sleep(for: interval)
                    id += 1
                    let item = NewsCatalog.news(id: id)
                    let text = String(decoding: try JSONSerialization.data(withJSONObject: item, options: [.sortedKeys]), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "id: \(id)\nevent: news\ndata: \(text)\n\n"))
                    sent += 1
                }
            })
        }
        router.get("/news/{id}") { _, context in
            if let fault = try await injectFaults() { return fault }
            guard let id = context.parameters.get("id", as: Int.self) else { return notFound() }
            return json(["data": NewsCatalog.news(id: id)])
        }
        router.get("/apps") { _, _ in
            if let fault = try await injectFaults() { return fault }
            let apps = (1...10).map { NewsCatalog.app(id: $0, withStability: !dice.roll(faults.missingStabilityRate)) }
            return json(["data": ["apps": apps]])
        }
        router.get("/apps/{id}/issues") { _, context in
            if let fault = try await injectFaults() { return fault }
            guard let id = context.parameters.get("id", as: Int.self), (1...10).contains(id) else { return notFound() }
            return json(["data": ["issues": (1...5).map { NewsCatalog.issue(app: id, number: $0) }]])
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "otec-news-server"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}

private func json(_ object: [String: Any]) -> Response {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    var headers = HTTPFields()
    headers[.contentType] = "application/json"
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

private func notFound() -> Response {
    Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: #"{"error":"not found"}"#)))
}

/// Seeded dice shared by all requests.
final class FaultDice: @unchecked Sendable {
    private var state: UInt64
    private let lock = NSLock()

    init(seed: UInt64) { state = seed }

    func roll(_ probability: Double) -> Bool {
        guard probability > 0 else { return false }
        lock.lock(); defer { lock.unlock() }
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53) < probability
    }
}
