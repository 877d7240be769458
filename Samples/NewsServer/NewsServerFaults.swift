/// Faults the sample news server injects, so apitrace has something to find.
public struct NewsServerFaults: Sendable {
    /// Share of REST responses answered with a 5xx status (0...1).
    public var serverErrorRate: Double
    /// Share of REST responses delayed by ``slowDelay`` (0...1).
    public var slowRate: Double
    /// How long a slow response waits.
    public var slowDelay: Duration
    /// Share of apps in `/apps` returned without their `stability` object (0...1).
    public var missingStabilityRate: Double
    /// An SSE connection is cut (a network error for the client) after this many events; `nil`: never.
    public var sseDropAfter: Int?
    /// An SSE connection goes silent (no events, no keep-alive) after this many events; `nil`: never.
    public var sseSilenceAfter: Int?
    /// A window of time, counted from the server's start, during which ``spikeErrorRate`` replaces ``serverErrorRate``.
    public var spike: Range<Duration>?
    /// The share of 5xx during the spike.
    public var spikeErrorRate: Double
    /// A live-comments WebSocket is dropped without a close frame after this many comments; `nil`: never.
    public var commentsDropAfter: Int?
    /// A live-comments WebSocket is closed with 1011 (internal error) after this many comments; `nil`: never.
    public var commentsErrorAfter: Int?
    /// Pings on a live-comments WebSocket are answered this late (a slow peer); `nil`: at once.
    public var commentsPongDelay: Duration?

    /// Creates a fault plan; the default injects nothing.
    public init(
        serverErrorRate: Double = 0, slowRate: Double = 0, slowDelay: Duration = .milliseconds(600),
        missingStabilityRate: Double = 0, sseDropAfter: Int? = nil, sseSilenceAfter: Int? = nil,
        spike: Range<Duration>? = nil, spikeErrorRate: Double = 0.6,
        commentsDropAfter: Int? = nil, commentsErrorAfter: Int? = nil, commentsPongDelay: Duration? = nil
    ) {
        self.commentsDropAfter = commentsDropAfter
        self.commentsErrorAfter = commentsErrorAfter
        self.commentsPongDelay = commentsPongDelay
        self.serverErrorRate = serverErrorRate
        self.slowRate = slowRate
        self.slowDelay = slowDelay
        self.missingStabilityRate = missingStabilityRate
        self.sseDropAfter = sseDropAfter
        self.sseSilenceAfter = sseSilenceAfter
        self.spike = spike
        self.spikeErrorRate = spikeErrorRate
    }

    /// No faults.
    public static let none = NewsServerFaults()
}
