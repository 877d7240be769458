public import APITraceFormat

/// Everything a report counts, exact where it can be and mergeable: summaries of separate files
/// (or separate time windows) combine with ``merge(_:)`` into the summary of all of them.
///
/// Built by ``TraceAggregator`` (one per file), merged by ``TraceSummarizer``; turned into a
/// presentable ``TraceReport``.
public struct TraceSummary: Sendable {
    // MARK: Input

    /// Trace files read (with a valid header and matching the filter).
    public var filesRead = 0
    /// Files skipped by the filter without reading their events (app version, start after `--until`).
    public var filesFiltered = 0
    /// Files that could not be used at all (unreadable, not a trace file, newer version).
    public var filesUnusable = 0
    /// Lines of event types this version does not know, skipped.
    public var unknownTypes = 0
    /// Lines that were not valid trace lines, skipped.
    public var invalidLines = 0
    /// Problems met while reading, in file order (at most ``maximumWarnings``).
    public var warnings: [TraceReadWarning] = []
    /// Warnings left out past ``maximumWarnings``.
    public var warningsOmitted = 0
    /// Most warnings kept.
    package static let maximumWarnings = 200

    // MARK: Totals

    /// Events counted (after filtering).
    public var events = 0
    /// Events read but left out by the filter.
    public var eventsFiltered = 0
    /// Events counted, by `type`.
    public var eventsByType: [String: Int] = [:]
    /// Earliest event counted.
    public var firstEvent: TraceTimestamp?
    /// Latest event counted.
    public var lastEvent: TraceTimestamp?
    /// All requests, by outcome.
    public var requests = RequestCounts()
    /// Latency of all requests.
    public var latency = QuantileSketch()
    /// Events producers reported dropping (`dropped` events), by reason.
    public var dropped: [String: Int] = [:]
    /// Log lines, by level.
    public var logLevels: [String: Int] = [:]

    // MARK: Sections

    /// Requests per method and route.
    public var routes: [RouteKey: RouteSummary] = [:]
    /// Recorded errors and request error identities, by identity.
    public var errors: [ErrorIdentityKey: ErrorIdentitySummary] = [:]
    /// Decode failures by entity, kind and path (array indices folded to `[*]`).
    public var decodeFailures: [DecodeFailureKey: DecodeFailureSummary] = [:]
    /// Decode failures per route (`-` for failures without a route).
    public var decodeFailuresByRoute: [String: Int] = [:]
    /// Server-Sent Events connections.
    public var sse = SSESummary()
    /// WebSocket connections.
    public var webSocket = WebSocketSummary()
    /// Counts per header `app_version` (`-` for files without one).
    public var appVersions: [String: AppVersionSummary] = [:]
    /// Counts over time.
    public var timeSeries: TimeSeries

    /// Most distinct error identities or decode-failure groups kept; the rest are folded into one
    /// `(other)` entry so memory stays bounded.
    package static let maximumKeys = 2000
    /// Most distinct method + route pairs kept (each holds a latency sketch of up to ~26 KB); the
    /// rest are counted together as ``RouteKey/other``.
    package static let maximumRoutes = 500

    /// Creates an empty summary whose time series starts at a granularity.
    public init(timeSeriesGranularity: Int64 = 1) {
        timeSeries = TimeSeries(granularitySeconds: timeSeriesGranularity)
    }

    /// Total decode failures.
    public var decodeFailureCount: Int { eventsByType["decode_failure", default: 0] }
    /// Total events dropped by producers.
    public var droppedCount: Int { dropped.values.reduce(0) { $0.addingSaturated($1) } }

    /// Adds a warning, keeping at most ``maximumWarnings``.
    package mutating func addWarning(_ warning: TraceReadWarning) {
        if warnings.count < Self.maximumWarnings { warnings.append(warning) } else { warningsOmitted += 1 }
    }

    /// Adds another summary's counts to this one.
    public mutating func merge(_ other: TraceSummary) {
        filesRead += other.filesRead
        filesFiltered += other.filesFiltered
        filesUnusable += other.filesUnusable
        unknownTypes += other.unknownTypes
        invalidLines += other.invalidLines
        for w in other.warnings { addWarning(w) }
        warningsOmitted += other.warningsOmitted
        events += other.events
        eventsFiltered += other.eventsFiltered
        eventsByType.merge(other.eventsByType, uniquingKeysWith: +)
        if let t = other.firstEvent, firstEvent.map({ t < $0 }) ?? true { firstEvent = t }
        if let t = other.lastEvent, lastEvent.map({ t > $0 }) ?? true { lastEvent = t }
        requests.merge(other.requests)
        latency.merge(other.latency)
        dropped.mergeBounded(other.dropped)
        logLevels.mergeBounded(other.logLevels)
        for (key, value) in other.routes {
            let key = routes[key] != nil || routes.count < Self.maximumRoutes - 1 ? key : .other
            routes[key, default: RouteSummary()].merge(value)
        }
        for (key, value) in other.errors {
            let key = errors[key] != nil || errors.count < Self.maximumKeys - 1 ? key : ErrorIdentityKey(identity: "(other)", source: key.source)
            errors[key, default: ErrorIdentitySummary()].merge(value)
        }
        for (key, value) in other.decodeFailures {
            let key = decodeFailures[key] != nil || decodeFailures.count < Self.maximumKeys - 1 ? key : .other
            decodeFailures[key, default: DecodeFailureSummary()].merge(value)
        }
        decodeFailuresByRoute.merge(other.decodeFailuresByRoute, uniquingKeysWith: +)
        sse.merge(other.sse)
        webSocket.merge(other.webSocket)
        for (key, value) in other.appVersions {
            let key = appVersions[key] != nil || appVersions.count < Self.maximumKeys - 1 ? key : "(other)"
            appVersions[key, default: AppVersionSummary()].merge(value)
        }
        timeSeries.merge(other.timeSeries)
    }
}
