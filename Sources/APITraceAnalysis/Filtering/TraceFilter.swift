public import APITraceFormat
import Foundation

/// Which events a summary counts: a time range, a route, a server host, an app version.
///
/// Every condition left `nil` matches everything. Route and host are patterns in the one grammar
/// of every command (`TextPattern`): `*` matches any run of characters, anywhere; without one the
/// value must match exactly.
///
/// ```swift
/// let filter = try TraceFilter(since: "2h", route: "/apps/*")
/// ```
public struct TraceFilter: Sendable, Equatable {
    /// Events at or after this instant.
    public var since: TraceTimestamp?
    /// Events before this instant.
    public var until: TraceTimestamp?
    /// Events whose route is this template, or matches it as a glob where `*` stands for any text
    /// (`/apps/*`, `*/reviews`). Events without a route (logs, dropped, route-less errors) are left
    /// out while it is set, except `dropped` events, which always count so that loss stays visible.
    public var route: String? { didSet { routePattern = route.map(TextPattern.init) } }
    /// Requests to this server host (the request's `host` field), or hosts matching it as a glob
    /// (`*.example.com`). Other event types carry no server host and are left out while it is set,
    /// except `dropped` events.
    public var host: String? { didSet { hostPattern = host.map(TextPattern.init) } }
    /// ``route`` and ``host`` compiled once, for the reading loops.
    package private(set) var routePattern: TextPattern?
    package private(set) var hostPattern: TextPattern?
    /// Files whose header `app_version` is this value; other files are skipped whole.
    public var appVersion: String?

    /// A filter that keeps everything.
    public static let all = TraceFilter()

    /// Creates a filter.
    public init(
        since: TraceTimestamp? = nil, until: TraceTimestamp? = nil, route: String? = nil,
        host: String? = nil, appVersion: String? = nil
    ) {
        self.since = since
        self.until = until
        self.route = route
        self.host = host
        self.appVersion = appVersion
        routePattern = route.map(TextPattern.init)
        hostPattern = host.map(TextPattern.init)
    }

    /// Creates a filter from command-line text: times in the one grammar of every command
    /// (``TimeGrammar``: RFC 3339, `now`, or a duration back from `now` such as `90s`, `1h30m`, `1.5h`, `7d`).
    public init(
        since: String?, until: String? = nil, route: String? = nil, host: String? = nil,
        appVersion: String? = nil, now: TraceTimestamp = .now()
    ) throws(TraceFilter.InvalidTime) {
        self.init(route: route, host: host, appVersion: appVersion)
        if let since { self.since = try Self.parseTime(since, option: "--since", now: now) }
        if let until { self.until = try Self.parseTime(until, option: "--until", now: now) }
    }

    /// A time option that is neither RFC 3339 nor a duration.
    public struct InvalidTime: Error, Sendable, Equatable, CustomStringConvertible {
        /// The option, such as `--since`.
        public var option: String
        /// The text given.
        public var text: String
        public var description: String {
            "\(option) \(text): expected \(TimeGrammar.instantHelp)"
        }
    }

    /// Parses an instant in the one grammar of every command (``TimeGrammar/instant(_:now:)``).
    public static func parseTime(_ text: String, option: String = "time", now: TraceTimestamp = .now()) throws(InvalidTime) -> TraceTimestamp {
        guard let t = TimeGrammar.instant(text, now: now) else { throw InvalidTime(option: option, text: text) }
        return t
    }

    /// Milliseconds in a duration (``TimeGrammar/milliseconds(_:)``); `nil` when malformed.
    public static func parseDuration(_ text: String) -> Int64? { TimeGrammar.milliseconds(text) }

    // MARK: - Matching

    /// True when a file with this header may hold matching events.
    public func matches(header: TraceFileHeader) -> Bool {
        if let appVersion, header.appVersion != appVersion { return false }
        return true
    }

    /// True when a file started at this time may hold matching events: a file holds no events from
    /// before its start, less ``TraceFileSelection/slack`` for clock skew (the file name gives the start).
    public func mayMatch(fileStarted: TraceTimestamp) -> Bool {
        if let until, fileStarted.millisecondsSince1970 >= until.millisecondsSince1970 &+ TraceFileSelection.slack { return false }
        return true
    }

    /// True when the instant is in the time range.
    @inline(__always)
    public func matches(time: TraceTimestamp) -> Bool {
        if let since, time < since { return false }
        if let until, time >= until { return false }
        return true
    }

    /// True when `route` matches the route condition, a glob (`TextPattern`: `/apps/*`, `*/issues`).
    public func matches(route candidate: String?) -> Bool {
        TextPattern.admits(routePattern, candidate)
    }

    /// True when `host` matches the host condition, a glob (`TextPattern`: `*.example.com`).
    public func matches(host candidate: String?) -> Bool {
        TextPattern.admits(hostPattern, candidate)
    }

    /// True when the whole event matches.
    public func matches(_ event: TraceEvent) -> Bool {
        guard matches(time: event.timestamp) else { return false }
        if case .dropped = event.payload { return true }
        if host != nil {
            guard case .request(let r) = event.payload, matches(host: r.host) else { return false }
        }
        if route != nil {
            switch event.payload {
            case .request(let r): return matches(route: r.route)
            case .decodeFailure(let d): return matches(route: d.route)
            case .error(let e): return matches(route: e.route)
            case .sse(let s): return matches(route: s.route)
            case .websocket(let w): return matches(route: w.route)
            case .log, .dropped: return false
            }
        }
        return true
    }

    /// True when every request passes: no time, host or route condition (the app version is the file's).
    package var keepsEveryRequest: Bool { since == nil && until == nil && route == nil && host == nil }

    /// ``matches(_:)`` for a scanned `request` line, without making its event (the streamed HAR export).
    package func matches(request record: TraceRecord) -> Bool {
        guard matches(time: TraceTimestamp(millisecondsSince1970: record.timestamp)) else { return false }
        guard TextPattern.admits(hostPattern, record.host) else { return false }
        return TextPattern.admits(routePattern, record.route)
    }

    /// True when a route or host condition is set (events then need those fields to match).
    var hasFieldConditions: Bool { route != nil || host != nil }

    /// True when the filter keeps every event.
    var isEmpty: Bool { since == nil && until == nil && route == nil && host == nil && appVersion == nil }
}
