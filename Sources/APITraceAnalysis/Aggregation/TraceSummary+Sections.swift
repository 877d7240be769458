import APITraceFormat

/// A method and route template, the unit of the per-route table.
public struct RouteKey: Sendable, Hashable, Comparable {
    /// HTTP method, such as `GET`.
    public var method: String
    /// Route template, such as `/apps/{id}`.
    public var route: String

    /// Creates a key.
    public init(method: String, route: String) {
        self.method = method
        self.route = route
    }

    /// Where routes past ``TraceSummary/maximumRoutes`` are counted.
    public static let other = RouteKey(method: "*", route: "(other routes)")

    public static func < (a: RouteKey, b: RouteKey) -> Bool { (a.route, a.method) < (b.route, b.method) }
}

/// Requests of one method and route.
public struct RouteSummary: Sendable {
    /// Requests by outcome.
    public var counts = RequestCounts()
    /// Latency of all its requests (sampled successes weighted by `1 / sample_rate`, rounded).
    public var latency = QuantileSketch()
    /// Distinct sessions per failure class.
    public var sessionsAffected = FailureSessions()

    /// Creates an empty summary.
    public init() {}

    /// Adds another route summary.
    public mutating func merge(_ other: RouteSummary) {
        counts.merge(other.counts)
        sessionsAffected.merge(other.sessionsAffected)
        latency.merge(other.latency)
    }
}

/// An error identity and where it was seen.
public struct ErrorIdentityKey: Sendable, Hashable {
    /// Where an identity came from.
    public enum Source: String, Sendable, Hashable, Comparable {
        /// An `error` event (`recordError`).
        case recorded
        /// The `error` field of a failed request.
        case request

        public static func < (a: Source, b: Source) -> Bool { a.rawValue < b.rawValue }
    }

    /// The identity, such as `URLError.timedOut` or `NSCocoaErrorDomain#4`.
    public var identity: String
    /// Where it came from.
    public var source: Source

    /// Creates a key.
    public init(identity: String, source: Source) {
        self.identity = identity
        self.source = source
    }
}

/// Occurrences of one error identity.
public struct ErrorIdentitySummary: Sendable {
    /// Events with this identity.
    public var events = 0
    /// Further occurrences producers suppressed by rate limiting (`suppressed`).
    public var suppressed = 0
    /// Distinct sessions that met it (events with a `session`).
    public var sessions = SessionCount()
    /// First and last time seen, milliseconds since 1970 (`Int64.max`/`.min` when never).
    public var firstSeen = Int64.max, lastSeen = Int64.min
    /// Example messages: the earliest distinct ones (at most ``maximumExamples``).
    public var examples = ExampleSet()
    /// Occurrences per route (`-` without a route).
    public var routes: [String: Int] = [:]
    /// Most routes listed per identity.
    package static let maximumRoutes = 50

    /// Creates an empty summary.
    public init() {}

    /// Events plus suppressed repeats.
    public var occurrences: Int { events + suppressed }

    /// Adds another summary of the same identity.
    public mutating func merge(_ other: ErrorIdentitySummary) {
        events += other.events
        suppressed += other.suppressed
        sessions.merge(other.sessions)
        firstSeen = min(firstSeen, other.firstSeen)
        lastSeen = max(lastSeen, other.lastSeen)
        examples.merge(other.examples)
        for (route, n) in other.routes { addRoute(route, count: n) }
    }

    /// Counts occurrences for a route, folding routes past ``maximumRoutes`` into `(other)`.
    package mutating func addRoute(_ route: String, count: Int) {
        let key = routes[route] != nil || routes.count < Self.maximumRoutes ? route : "(other)"
        routes[key, default: 0] += count
    }
}

/// A decode-failure group: the Swift type, the kind of failure, and the key path with array
/// indices folded (`data.apps[3].stability` and `data.apps[7].stability` are both `data.apps[*].stability`).
public struct DecodeFailureKey: Sendable, Hashable {
    /// The Swift type being decoded (`entity`).
    public var entity: String
    /// `keyNotFound`, `typeMismatch`, `valueNotFound`, `dataCorrupted` or another kind.
    public var kind: String
    /// The key path with indices folded to `[*]`.
    public var path: String

    /// Creates a key.
    public init(entity: String, kind: String, path: String) {
        self.entity = entity
        self.kind = kind
        self.path = path
    }

    /// Where groups past ``TraceSummary/maximumKeys`` are counted.
    public static let other = DecodeFailureKey(entity: "(other)", kind: "", path: "")
}

/// Occurrences of one decode-failure group.
public struct DecodeFailureSummary: Sendable {
    /// Failures in the group.
    public var count = 0
    /// Distinct sessions that met it (events with a `session`).
    public var sessions = SessionCount()
    /// First and last time seen, milliseconds since 1970 (`Int64.max`/`.min` when never).
    public var firstSeen = Int64.max, lastSeen = Int64.min
    /// The failing key (`key`), when producers wrote it.
    public var key: String?
    /// Example full paths, earliest first.
    public var examplePaths = ExampleSet()
    /// Example decoder messages, earliest first.
    public var exampleMessages = ExampleSet()
    /// Failures per route (`-` without a route).
    public var routes: [String: Int] = [:]

    /// Creates an empty summary.
    public init() {}

    /// Adds another summary of the same group.
    public mutating func merge(_ other: DecodeFailureSummary) {
        count += other.count
        sessions.merge(other.sessions)
        firstSeen = min(firstSeen, other.firstSeen)
        lastSeen = max(lastSeen, other.lastSeen)
        if key == nil { key = other.key }
        examplePaths.merge(other.examplePaths)
        exampleMessages.merge(other.exampleMessages)
        for (route, n) in other.routes {
            let k = routes[route] != nil || routes.count < ErrorIdentitySummary.maximumRoutes ? route : "(other)"
            routes[k, default: 0] += n
        }
    }
}

/// Server-Sent Events connections: opens, closes, reconnects, failures and why.
public struct SSESummary: Sendable {
    /// `open` events: connections established.
    public var opens = 0
    /// `close` events.
    public var closes = 0
    /// `reconnect` events.
    public var reconnects = 0
    /// `fail` events: the client gave up.
    public var fails = 0
    /// Reasons given by `close` and `fail` events.
    public var reasons: [String: Int] = [:]
    /// Reconnect delays (`delay_ms` of `reconnect`), in milliseconds.
    public var reconnectDelay = QuantileSketch()
    /// Events received per closed connection (`events` of `close`).
    public var eventsPerConnection = QuantileSketch()
    /// How long connections stayed open (`duration_ms` of `close`), in milliseconds.
    public var connectionDuration = QuantileSketch()
    /// Per stream route.
    public var routes: [String: SSERouteCounts] = [:]

    /// Creates an empty summary.
    public init() {}

    /// Adds another summary.
    public mutating func merge(_ other: SSESummary) {
        opens += other.opens
        closes += other.closes
        reconnects += other.reconnects
        fails += other.fails
        reasons.mergeBounded(other.reasons)
        reconnectDelay.merge(other.reconnectDelay)
        eventsPerConnection.merge(other.eventsPerConnection)
        connectionDuration.merge(other.connectionDuration)
        for (route, counts) in other.routes {
            let key = routes[route] != nil || routes.count < TraceSummary.maximumKeys ? route : "(other)"
            routes[key, default: SSERouteCounts()].merge(counts)
        }
    }
}

/// SSE counts of one stream route.
public struct SSERouteCounts: Sendable, Equatable {
    /// Connections opened.
    public var opens = 0
    /// Reconnects.
    public var reconnects = 0
    /// Give-ups.
    public var fails = 0

    /// Creates zero counts.
    public init() {}

    /// Adds another route's counts.
    public mutating func merge(_ other: SSERouteCounts) {
        opens += other.opens
        reconnects += other.reconnects
        fails += other.fails
    }
}

/// The earliest few distinct texts seen, kept deterministic whatever order files are merged in.
public struct ExampleSet: Sendable, Equatable {
    /// Examples kept, earliest first (ties by text).
    public private(set) var items: [(time: Int64, text: String)] = []
    /// Most examples kept.
    public static let capacity = 3

    /// Creates an empty set.
    public init() {}

    /// Texts offered so far; past ``offerLimit`` only texts earlier than the kept ones are looked
    /// at, so a group repeating one message does not build a `String` per event.
    private var offers = 0
    /// Offers looked at before only earlier texts are.
    public static let offerLimit = 64

    /// True when a text seen at `time` may be kept (cheap check before building the string).
    @inline(__always)
    package func wouldKeep(time: Int64) -> Bool {
        guard let last = items.last else { return true }
        if time < last.time { return true }
        return items.count < Self.capacity && offers < Self.offerLimit
    }

    /// Offers a text seen at `time` (milliseconds since the epoch).
    package mutating func offer(_ text: String, time: Int64) {
        offers += 1
        insert(text, time: time)
    }

    /// Offers every example of another set.
    public mutating func merge(_ other: ExampleSet) {
        for item in other.items { insert(item.text, time: item.time) }
    }

    mutating func insert(_ text: String, time: Int64) {
        if let i = items.firstIndex(where: { $0.text == text }) {
            if time < items[i].time { items[i].time = time; sort() }
            return
        }
        guard items.count < Self.capacity || (time, text) < (items[items.count - 1].time, items[items.count - 1].text) else { return }
        items.append((time, text))
        sort()
        if items.count > Self.capacity { items.removeLast() }
    }

    /// The texts, earliest first.
    public var texts: [String] { items.map(\.text) }

    private mutating func sort() {
        items.sort { ($0.time, $0.text) < ($1.time, $1.text) }
    }

    public static func == (a: ExampleSet, b: ExampleSet) -> Bool { a.texts == b.texts }
}
