public import APITraceCapture
import APITraceSSE
public import Foundation

/// Live news over Server-Sent Events, as the Otec app listens to them while it reads the REST API.
public final class NewsFeed: Sendable {
    private let source: EventSource

    /// Connects to `GET /news/stream`; its connects, drops and reconnects are traced.
    public init(baseURL: URL, tracer: APITracer = .shared, idleTimeout: Duration = .seconds(5)) {
        source = EventSource(configuration: .init(
            url: baseURL.appendingPathComponent("news/stream"),
            reconnect: ReconnectPolicy(initialDelay: .milliseconds(300), maximumDelay: .seconds(5), resetAfter: .seconds(10)),
            idleTimeout: idleTimeout, route: "/news/stream", tracer: tracer))
    }

    /// Calls `onNews` for every item received, decoding each with a traced decoder.
    public func start(tracer: APITracer = .shared, onNews: @escaping @Sendable (News) -> Void) {
        let decoder = TracedJSONDecoder(tracer: tracer)
        source.addListener(for: "news") { event in
            if let news = try? decoder.decode(News.self, from: Data(event.data.utf8), route: "/news/stream") {
                onNews(news)
            }
        }
        source.start()
    }

    /// The id of the last item received.
    public var lastEventID: String { source.lastEventID }

    /// Stops listening.
    public func stop() async {
        source.close()
        await source.waitUntilStopped()
    }
}
