import APITraceFormat

/// Counts the events of one stream (typically one file) into a ``TraceSummary``.
///
/// Feed it decoded events with ``add(_:)``, raw JSON lines with ``add(line:)`` (the fast path:
/// only the fields a report needs are read, routes and methods are interned from their bytes), or
/// whole files with ``read(_:)``. Then take ``summary()`` and merge summaries across files or
/// workers. The filter is applied as events arrive.
///
/// ```swift
/// var aggregator = TraceAggregator(filter: TraceFilter(route: "/apps/*"))
/// aggregator.read(TraceFileReader(path: "traces/20261122T100000Z-ab12cd34-0001.jsonl.gz"))
/// let summary = aggregator.summary()
/// ```
public struct TraceAggregator {
    /// The filter events must match to be counted.
    public let filter: TraceFilter

    /// Input counters, totals and the plain-keyed parts of the summary.
    var base: TraceSummary
    var firstMs = Int64.max
    var lastMs = Int64.min
    var typeCounts = [Int](repeating: 0, count: EventType.allCases.count)

    // Interned values; arrays below are indexed by these ids.
    var methods = ByteInterner(capacity: 16)
    var routeNames = ByteInterner()
    var recordedIdentities = ByteInterner()
    var requestIdentities = ByteInterner()
    var decodeGroups = ByteInterner()
    var smallStrings = ByteInterner(capacity: 64)

    /// For each route id: (method id, slot) pairs; a route has few methods.
    var slotsByRoute: [[(method: Int32, slot: Int32)]] = []
    var slotKeys: [(method: Int, route: Int)] = []
    var slotSummaries: [RouteSummary] = []
    var overflowSlot: Int?
    /// For each route id: 0 = not checked yet, 1 = matches the route filter, 2 = does not.
    var routeFilterState: [UInt8] = []

    var recordedErrors: [IdentityAccumulator] = []
    var requestErrors: [IdentityAccumulator] = []
    var decodeAccumulators: [DecodeAccumulator] = []
    var decodeByRoute: [Int: Int] = [:]
    var logLevelCounts: [Int: Int] = [:]
    var sseReasons: [Int: Int] = [:]
    var sseRoutes: [Int: SSERouteCounts] = [:]
    var webSocket = WebSocketAccumulator()

    // The time bucket being filled; events of a file arrive in time order, so most land in it.
    var currentBucketStart = Int64.min
    var currentBucket = TimeBucket()

    /// The app version of the file being read (its header's `app_version`, `-` without one) and
    /// what it counted; folded into the summary's ``TraceSummary/appVersions`` per file.
    var appVersion = "-"
    var appVersionCounts = AppVersionSummary()
    /// The header of the file ``read(_:)`` read last (nil when it had none or was skipped unopened).
    var lastHeader: TraceFileHeader?

    /// Creates an aggregator. `timeSeriesGranularity` is the finest bucket width kept, in seconds.
    public init(filter: TraceFilter = .all, timeSeriesGranularity: Int64 = 1) {
        self.filter = filter
        base = TraceSummary(timeSeriesGranularity: timeSeriesGranularity)
    }

    /// The event types a report counts, in `type` field spelling.
    enum EventType: Int, CaseIterable {
        case request, decodeFailure, error, sse, log, dropped, websocket
        var name: String {
            switch self {
            case .request: "request"
            case .decodeFailure: "decode_failure"
            case .error: "error"
            case .sse: "sse"
            case .log: "log"
            case .dropped: "dropped"
            case .websocket: "websocket"
            }
        }
    }

    struct IdentityAccumulator {
        var events = 0
        var suppressed = 0
        var sessions = SessionCount()
        var firstMs = Int64.max
        var lastMs = Int64.min
        var examples = ExampleSet()
        /// Route id (-1 without a route) -> count.
        var routes: [Int: Int] = [:]
    }

    struct DecodeAccumulator {
        var entity: String
        var kind: String
        var path: String
        var key: String?
        var count = 0
        var sessions = SessionCount()
        var firstMs = Int64.max
        var lastMs = Int64.min
        var examplePaths = ExampleSet()
        var exampleMessages = ExampleSet()
        var routes: [Int: Int] = [:]
    }

    // MARK: - Shared recording, by interned ids

    /// Counts an event that passed the filter.
    @inline(__always)
    mutating func countEvent(_ type: EventType, ms: Int64) {
        base.events += 1
        appVersionCounts.events += 1
        if ms < appVersionCounts.firstMs { appVersionCounts.firstMs = ms }
        if ms > appVersionCounts.lastMs { appVersionCounts.lastMs = ms }
        typeCounts[type.rawValue] += 1
        if ms < firstMs { firstMs = ms }
        if ms > lastMs { lastMs = ms }
    }

    /// Switches the current time bucket to the one holding `ms`.
    @inline(__always)
    mutating func bucket(at ms: Int64) {
        let start = base.timeSeries.bucketStart(milliseconds: ms)
        if start != currentBucketStart { switchBucket(to: start) }
    }

    mutating func switchBucket(to start: Int64) {
        if currentBucketStart != .min { base.timeSeries.add(currentBucket, at: currentBucketStart) }
        currentBucket = TimeBucket()
        // Adding may have coarsened the series; recompute the start in its granularity.
        currentBucketStart = base.timeSeries.bucketStart(milliseconds: start * 1000)
    }

    /// True when the route id passes the route filter.
    @inline(__always)
    mutating func routeMatches(_ route: Int) -> Bool {
        guard filter.route != nil else { return true }
        while routeFilterState.count <= route { routeFilterState.append(0) }
        if routeFilterState[route] == 0 {
            routeFilterState[route] = filter.matches(route: routeNames.string(route)) ? 1 : 2
        }
        return routeFilterState[route] == 1
    }

    @inline(__always)
    mutating func slot(method: Int, route: Int) -> Int {
        while slotsByRoute.count <= route { slotsByRoute.append([]) }
        for pair in slotsByRoute[route] where Int(pair.method) == method { return Int(pair.slot) }
        if slotSummaries.count >= TraceSummary.maximumRoutes - 1 {
            // Past the cap, every new method and route shares one row, so memory stays bounded.
            if let overflowSlot { return overflowSlot }
            let m = methods.id(of: RouteKey.other.method), r = routeNames.id(of: RouteKey.other.route)
            while slotsByRoute.count <= r { slotsByRoute.append([]) }
            overflowSlot = slotSummaries.count
            slotsByRoute[r].append((Int32(m), Int32(overflowSlot!)))
            slotKeys.append((m, r))
            slotSummaries.append(RouteSummary())
            return overflowSlot!
        }
        let slot = slotSummaries.count
        slotsByRoute[route].append((Int32(method), Int32(slot)))
        slotKeys.append((method, route))
        slotSummaries.append(RouteSummary())
        return slot
    }

    @inline(__always)
    mutating func recordRequest(
        ms: Int64, method: Int, route: Int, outcome: RequestOutcome, weight: Double, durationMs: Double,
        bytesIn: Int64?, bytesOut: Int64?, requestError: Int?, session: UInt64? = nil
    ) {
        countEvent(.request, ms: ms)
        bucket(at: ms)
        base.requests.add(outcome: outcome, weight: weight, bytesIn: bytesIn, bytesOut: bytesOut)
        currentBucket.requests.add(outcome: outcome, weight: weight, bytesIn: bytesIn, bytesOut: bytesOut)
        let s = slot(method: method, route: route)
        slotSummaries[s].counts.add(outcome: outcome, weight: weight, bytesIn: bytesIn, bytesOut: bytesOut)
        // The same weight as the counts (at most 10,000: RequestWeight bounds it).
        slotSummaries[s].latency.record(durationMs, weight: UInt64(max(1, weight.rounded())))
        appVersionCounts.requests.add(outcome: outcome, weight: weight, bytesIn: nil, bytesOut: nil)
        if let session {
            switch outcome {
            case .serverError, .transport, .clientError:
                slotSummaries[s].sessionsAffected.insert(session, outcome: outcome)
                appVersionCounts.sessionsAffected.insert(session)
            case .success, .cancelled, .offline:
                break
            }
        }
        if let requestError {
            while requestErrors.count <= requestError { requestErrors.append(IdentityAccumulator()) }
            requestErrors[requestError].events += 1
            Self.seen(ms, session, &requestErrors[requestError])
            Self.count(route, in: &requestErrors[requestError].routes)
        }
    }

    @inline(__always)
    static func seen(_ ms: Int64, _ session: UInt64?, _ acc: inout IdentityAccumulator) {
        if ms < acc.firstMs { acc.firstMs = ms }
        if ms > acc.lastMs { acc.lastMs = ms }
        if let session { acc.sessions.insert(session) }
    }

    mutating func recordError(ms: Int64, identity: Int, route: Int?, suppressed: Int, session: UInt64? = nil, message: () -> String) {
        countEvent(.error, ms: ms)
        appVersionCounts.recordedErrors = appVersionCounts.recordedErrors.addingSaturated(1 + suppressed)
        if let session { appVersionCounts.sessionsAffected.insert(session) }
        bucket(at: ms)
        currentBucket.recordedErrors = currentBucket.recordedErrors.addingSaturated(1 + suppressed)
        while recordedErrors.count <= identity { recordedErrors.append(IdentityAccumulator()) }
        recordedErrors[identity].events += 1
        recordedErrors[identity].suppressed = recordedErrors[identity].suppressed.addingSaturated(suppressed)
        Self.seen(ms, session, &recordedErrors[identity])
        Self.count(route ?? -1, in: &recordedErrors[identity].routes, by: 1 + suppressed)
        if recordedErrors[identity].examples.wouldKeep(time: ms) {
            recordedErrors[identity].examples.offer(message(), time: ms)
        }
    }

    mutating func recordDecodeFailure(
        ms: Int64, group: Int, route: Int?, entity: () -> String, kind: () -> String, path: () -> String,
        key: () -> String?, message: () -> String, session: UInt64? = nil
    ) {
        countEvent(.decodeFailure, ms: ms)
        appVersionCounts.decodeFailures += 1
        if let session { appVersionCounts.sessionsAffected.insert(session) }
        bucket(at: ms)
        currentBucket.decodeFailures += 1
        if group == decodeAccumulators.count {
            let p = path()
            decodeAccumulators.append(DecodeAccumulator(
                entity: entity(), kind: kind(), path: TraceEvent.DecodeFailure.foldIndices(p), key: key()))
        }
        decodeAccumulators[group].count += 1
        if ms < decodeAccumulators[group].firstMs { decodeAccumulators[group].firstMs = ms }
        if ms > decodeAccumulators[group].lastMs { decodeAccumulators[group].lastMs = ms }
        if let session { decodeAccumulators[group].sessions.insert(session) }
        Self.count(route ?? -1, in: &decodeAccumulators[group].routes)
        decodeByRoute[route ?? -1, default: 0] += 1
        if decodeAccumulators[group].key == nil { decodeAccumulators[group].key = key() }
        if decodeAccumulators[group].examplePaths.wouldKeep(time: ms) {
            decodeAccumulators[group].examplePaths.offer(path(), time: ms)
        }
        if decodeAccumulators[group].exampleMessages.wouldKeep(time: ms) {
            decodeAccumulators[group].exampleMessages.offer(message(), time: ms)
        }
    }

    /// Most routes counted per identity or decode-failure group; the rest share `(other)` (id -2).
    static let maximumRoutesPerGroup = ErrorIdentitySummary.maximumRoutes

    @inline(__always)
    static func count(_ route: Int, in routes: inout [Int: Int], by n: Int = 1) {
        let key = routes[route] != nil || routes.count < maximumRoutesPerGroup ? route : -2
        routes[key, default: 0] += n
    }

    /// SSE phases as the aggregator counts them.
    enum SSEPhase { case open, close, reconnect, fail, other }

    mutating func recordSSE(
        ms: Int64, phase: SSEPhase, route: Int, reason: Int?, delayMs: Double?, events: Int?, durationMs: Double?
    ) {
        countEvent(.sse, ms: ms)
        switch phase {
        case .open:
            base.sse.opens += 1
            sseRoutes[route, default: SSERouteCounts()].opens += 1
        case .close:
            base.sse.closes += 1
            if let events { base.sse.eventsPerConnection.record(Double(events)) }
            if let durationMs { base.sse.connectionDuration.record(durationMs) }
        case .reconnect:
            base.sse.reconnects += 1
            sseRoutes[route, default: SSERouteCounts()].reconnects += 1
            if let delayMs { base.sse.reconnectDelay.record(delayMs) }
            bucket(at: ms)
            currentBucket.sseReconnects += 1
        case .fail:
            base.sse.fails += 1
            sseRoutes[route, default: SSERouteCounts()].fails += 1
        case .other:
            break
        }
        if let reason, phase == .close || phase == .fail { sseReasons[reason, default: 0] += 1 }  // ids: bounded by the interner
    }

    mutating func recordLog(ms: Int64, level: Int) {
        countEvent(.log, ms: ms)
        logLevelCounts[level, default: 0] += 1
    }

    mutating func recordDropped(ms: Int64, count: Int, reason: String) {
        countEvent(.dropped, ms: ms)
        base.dropped.addBounded(reason, count)
    }

    // MARK: - Result

    /// Moves what the current file counted into ``TraceSummary/appVersions`` under its app version.
    mutating func flushAppVersion() {
        guard appVersionCounts.events > 0 || appVersionCounts.files > 0 else { return }
        let key = base.appVersions[appVersion] != nil || base.appVersions.count < TraceSummary.maximumKeys - 1 ? appVersion : "(other)"
        base.appVersions[key, default: AppVersionSummary()].merge(appVersionCounts)
        appVersionCounts = AppVersionSummary()
    }

    /// The summary of everything added so far.
    public func summary() -> TraceSummary {
        var s = base
        var aggregator = self
        aggregator.flushAppVersion()
        s.appVersions = aggregator.base.appVersions
        if currentBucketStart != .min { s.timeSeries.add(currentBucket, at: currentBucketStart) }
        if firstMs <= lastMs {
            s.firstEvent = TraceTimestamp(millisecondsSince1970: firstMs)
            s.lastEvent = TraceTimestamp(millisecondsSince1970: lastMs)
        }
        for type in EventType.allCases where typeCounts[type.rawValue] > 0 {
            s.eventsByType[type.name, default: 0] += typeCounts[type.rawValue]
        }
        func routeName(_ id: Int) -> String { id == -2 ? "(other)" : id < 0 ? "-" : routeNames.string(id) }
        var routes: [RouteKey: RouteSummary] = [:]
        for (i, key) in slotKeys.enumerated() {
            routes[RouteKey(method: methods.string(key.method), route: routeNames.string(key.route))] = slotSummaries[i]
            s.latency.merge(slotSummaries[i].latency)
        }
        var single = TraceSummary()
        single.routes = routes
        func identities(_ list: [IdentityAccumulator], _ names: ByteInterner, _ source: ErrorIdentityKey.Source) {
            for (id, acc) in list.enumerated() where acc.events > 0 {
                var summary = ErrorIdentitySummary()
                summary.events = acc.events
                summary.suppressed = acc.suppressed
                summary.sessions = acc.sessions
                summary.firstSeen = acc.firstMs
                summary.lastSeen = acc.lastMs
                summary.examples = acc.examples
                for (route, n) in acc.routes { summary.addRoute(routeName(route), count: n) }
                single.errors[ErrorIdentityKey(identity: names.string(id), source: source)] = summary
            }
        }
        identities(recordedErrors, recordedIdentities, .recorded)
        identities(requestErrors, requestIdentities, .request)
        for acc in decodeAccumulators {
            var summary = DecodeFailureSummary()
            summary.count = acc.count
            summary.sessions = acc.sessions
            summary.firstSeen = acc.firstMs
            summary.lastSeen = acc.lastMs
            summary.key = acc.key
            summary.examplePaths = acc.examplePaths
            summary.exampleMessages = acc.exampleMessages
            for (route, n) in acc.routes { summary.routes[routeName(route), default: 0] += n }
            single.decodeFailures[DecodeFailureKey(entity: acc.entity, kind: acc.kind, path: acc.path), default: DecodeFailureSummary()].merge(summary)
        }
        for (route, n) in decodeByRoute { single.decodeFailuresByRoute[routeName(route), default: 0] += n }
        for (level, n) in logLevelCounts { s.logLevels.addBounded(smallStrings.string(level), n) }
        for (reason, n) in sseReasons { s.sse.reasons.addBounded(smallStrings.string(reason), n) }
        for (route, counts) in sseRoutes { s.sse.routes[routeName(route), default: SSERouteCounts()].merge(counts) }
        s.webSocket = webSocketSummary(routeName: routeName)
        // Merging through an empty summary applies the key caps the same way across files.
        s.routes = [:]
        s.errors = [:]
        s.decodeFailures = [:]
        s.decodeFailuresByRoute = [:]
        var keyed = TraceSummary(timeSeriesGranularity: s.timeSeries.granularitySeconds)
        keyed.merge(single)
        s.routes = keyed.routes
        s.errors = keyed.errors
        s.decodeFailures = keyed.decodeFailures
        s.decodeFailuresByRoute = keyed.decodeFailuresByRoute
        return s
    }
}
