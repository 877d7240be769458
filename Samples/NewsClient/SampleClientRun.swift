public import APITraceCapture
public import Foundation

/// Drives the sample client like a user browsing the app: newspapers, news, apps and their
/// issues, with the live feed open, recording every failure with `recordError`.
public struct SampleClientRun: Sendable {
    /// What happened, as the client saw it.
    public struct Outcome: Sendable {
        public var requests = 0
        public var failures = 0
        public var newsReceived = 0
        public var commentsReceived = 0
    }

    let api: NewsAPI
    let tracer: APITracer
    let baseURL: URL
    let commentsURL: URL?

    /// Creates a run against `baseURL`, tracing into `tracer`; with `commentsURL` (`ws://...`), the
    /// live comments of a news item stay open while browsing.
    public init(baseURL: URL, commentsURL: URL? = nil, tracer: APITracer) {
        self.baseURL = baseURL
        self.commentsURL = commentsURL
        self.tracer = tracer
        api = NewsAPI(baseURL: baseURL, tracer: tracer)
    }

    /// Browses for `duration`, pausing `pause` between screens.
    public func run(for duration: Duration, pause: Duration = .milliseconds(40)) async -> Outcome {
        let newspapers = NewspapersRepository(api: api)
        let news = NewsRepository(api: api)
        let apps = AppsRepository(api: api)
        let feed = NewsFeed(baseURL: baseURL, tracer: tracer)
        let received = Counter()
        feed.start(tracer: tracer) { _ in received.increment() }
        let comments = commentsURL.map { LiveComments(baseURL: $0, newsID: 42, tracer: tracer) }
        let commentCount = Counter()
        let commentsTask = comments.map { live in Task { await live.run { _ in commentCount.increment() } } }

        var outcome = Outcome()
        let deadline = ContinuousClock.now + duration
        var screen = 0
        while ContinuousClock.now < deadline {
            screen += 1
            let routes = ["/newspapers", "/newspapers/{id}/news", "/news/{id}", "/apps", "/apps/{id}/issues"]
            do {
                switch screen % 5 {
                case 0: _ = try await newspapers.all()
                case 1: _ = try await newspapers.news(of: 1 + screen % 5)
                case 2: _ = try await news.read(id: screen)
                case 3: _ = try await apps.all()
                default: _ = try await apps.issues(of: String(1 + screen % 10))
                }
            } catch {
                outcome.failures += 1
                tracer.recordError(error, userInfo: ["screen": routes[screen % 5]], route: routes[screen % 5])
            }
            outcome.requests += 1
            try? await Task.sleep(for: pause)
        }
        await feed.stop()
        await comments?.stop()
        await commentsTask?.value
        outcome.newsReceived = received.value
        outcome.commentsReceived = commentCount.value
        return outcome
    }
}

/// A thread-safe counter for the feed's callback.
final class Counter: @unchecked Sendable {
    private var count = 0
    private let lock = NSLock()
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
