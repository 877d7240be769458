package import APITraceFormat

/// Which event lines `apitrace cat` prints: a time range, event types, route, host and session patterns,
/// tested on the ``TraceRecord`` the reading layer scanned, so the line itself is passed on untouched.
///
/// Every condition left `nil` matches everything; a route, host or session condition leaves out
/// events that carry no such field (the `jq 'select(.route == ...)'` meaning).
///
/// ```swift
/// let filter = try TraceLineFilter(since: "2h", types: ["request"], route: "/apps/*")
/// ```
package struct TraceLineFilter: Sendable {
    /// Events at or after this instant (milliseconds since 1970).
    package var since: Int64?
    /// Events before this instant (milliseconds since 1970).
    package var until: Int64?
    /// Event types kept; nil keeps every type.
    package var types: Set<TraceRecord.Kind>?
    /// Route template glob (``TextPattern``: `*` is any run of characters).
    package var route: TextPattern?
    /// Session identifier glob, in the same grammar.
    package var session: TextPattern?
    /// Server host glob (`host` field), in the same grammar.
    package var host: TextPattern?

    /// A filter that keeps every line.
    package static let all = TraceLineFilter()

    package init(since: Int64? = nil, until: Int64? = nil, types: Set<TraceRecord.Kind>? = nil, route: TextPattern? = nil, session: TextPattern? = nil, host: TextPattern? = nil) {
        self.since = since
        self.until = until
        self.types = types
        self.route = route
        self.session = session
        self.host = host
    }

    /// A filter from command-line text; times in the one grammar (``TimeGrammar``), types by their
    /// names in the trace format (`request`, `decode_failure`, `error`, `sse`, `log`, `dropped`).
    package init(since: String? = nil, until: String? = nil, types: [String] = [], route: String? = nil, session: String? = nil, host: String? = nil, now: TraceTimestamp = .now()) throws(TraceFilterError) {
        do {
            if let since { self.since = try TraceFilter.parseTime(since, option: "--since", now: now).millisecondsSince1970 }
            if let until { self.until = try TraceFilter.parseTime(until, option: "--until", now: now).millisecondsSince1970 }
        } catch {
            throw TraceFilterError(description: error.description)
        }
        if !types.isEmpty {
            var kinds = Set<TraceRecord.Kind>()
            for name in types.flatMap({ $0.split(separator: ",") }) {
                guard let kind = Self.kinds[String(name)] else {
                    throw TraceFilterError(description: "--type \(name): expected one of \(Self.kinds.keys.sorted().joined(separator: ", "))")
                }
                kinds.insert(kind)
            }
            self.types = kinds
        }
        self.route = route.map(TextPattern.init)
        self.session = session.map(TextPattern.init)
        self.host = host.map(TextPattern.init)
    }

    /// Event type names of the trace format.
    package static let kinds: [String: TraceRecord.Kind] = [
        "request": .request, "decode_failure": .decodeFailure, "error": .error, "sse": .sse, "log": .log, "dropped": .dropped, "websocket": .websocket,
    ]

    /// True when no condition is set: every valid line is printed.
    package var keepsEverything: Bool { since == nil && until == nil && types == nil && route == nil && session == nil && host == nil }

    /// True when the record's line is printed.
    @inline(__always)
    package func matches(_ record: TraceRecord) -> Bool {
        if let since, record.timestamp < since { return false }
        if let until, record.timestamp >= until { return false }
        if let types, !types.contains(record.kind) { return false }
        return TextPattern.admits(route, record.route) && TextPattern.admits(session, record.session) && TextPattern.admits(host, record.host)
    }
}

/// A filter option that could not be understood; the message names the option and what it expects.
package struct TraceFilterError: Error, Sendable, CustomStringConvertible {
    package var description: String
}
