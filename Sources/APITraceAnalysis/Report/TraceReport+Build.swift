import Foundation
import APITraceFormat

extension TraceReport {
    /// The error definitions, as printed in every format and in `Docs/report.md`.
    public static func definitions(includeDecodeFailures: Bool) -> [String] {
        [
            "error: a request whose transport failed (no HTTP status) or whose status is 5xx",
            "client error: a request with a 4xx status; counted apart, not an error",
            includeDecodeFailures
                ? "decode failure: a response that did not decode into its model; counted as an error here (--include-decode-failures)"
                : "decode failure: a response that did not decode into its model; counted apart (--include-decode-failures counts them as errors)",
            "rates: per request; where producers sampled successful requests (sample_rate), successes are scaled by 1/sample_rate; requests the app cancelled or that never left an offline device are client-side, shown apart and in no rate",
            "percentiles: nearest rank, at most \(Self.percentileErrorText) above the exact value",
            sessionsDefinition,
        ]
    }

    /// What session counts mean, as printed in every format.
    public static var sessionsDefinition: String {
        "sessions: distinct `session` values of the events counted, exact up to \(SessionCount.exactLimit), then a HyperLogLog estimate (marked ~, standard error 1.6 %)"
    }

    /// The documented percentile error bound as text.
    public static var percentileErrorText: String { "0.78 %" }

    /// Builds the report of a summary.
    public init(summary s: TraceSummary, options: Options = Options()) {
        self.options = options
        let fold = options.includeDecodeFailures
        definitions = Self.definitions(includeDecodeFailures: fold)
        firstEvent = s.firstEvent
        lastEvent = s.lastEvent
        input = Input(
            sources: options.sources, filesRead: s.filesRead, filesFiltered: s.filesFiltered, filesUnusable: s.filesUnusable,
            eventsFiltered: s.eventsFiltered, unknownTypes: s.unknownTypes, invalidLines: s.invalidLines,
            warnings: s.warnings.map(\.description), warningsOmitted: s.warningsOmitted)

        let r = s.requests
        let decode = s.decodeFailureCount
        let errorCount = r.errors + (fold ? decode : 0)
        totals = Totals(
            events: s.events, eventsByType: s.eventsByType, requests: r.requests, estimatedRequests: r.estimatedRequests,
            sampledRequests: r.sampled, errors: errorCount, serverErrors: r.serverErrors, transportErrors: r.transportErrors,
            clientErrors: r.clientErrors, decodeFailures: decode, errorRate: r.ratio(errorCount),
            clientErrorRate: r.clientErrorRate, decodeFailureRate: r.ratio(decode),
            recordedErrors: s.errors.filter { $0.key.source == .recorded }.reduce(0) { $0 + $1.value.occurrences },
            dropped: s.droppedCount, droppedByReason: s.dropped, latency: Percentiles(s.latency),
            bytesIn: r.bytesIn, bytesOut: r.bytesOut)
        totals.cancelled = r.cancelled
        totals.offline = r.offline

        routes = Self.routeRows(s, fold: fold)
        let sortedErrors = s.errors.sorted {
            ($0.value.occurrences, $1.key.identity, $1.key.source) > ($1.value.occurrences, $0.key.identity, $0.key.source)
        }
        errors = sortedErrors.prefix(options.topErrors).map { key, value in
            ErrorRow(
                identity: key.identity, source: key.source.rawValue, occurrences: value.occurrences, events: value.events,
                suppressed: value.suppressed, sessions: Count(value.sessions), firstSeen: Self.time(value.firstSeen),
                lastSeen: Self.time(value.lastSeen), examples: value.examples.texts, routes: Self.ranked(value.routes))
        }
        errorsOmitted = max(0, sortedErrors.count - options.topErrors)
        decodeFailures = s.decodeFailures.sorted {
            ($0.value.count, $1.key.entity, $1.key.kind, $1.key.path) > ($1.value.count, $0.key.entity, $0.key.kind, $0.key.path)
        }.map { key, value in
            DecodeFailureRow(
                entity: key.entity, kind: key.kind, path: key.path, key: value.key, count: value.count,
                sessions: Count(value.sessions), firstSeen: Self.time(value.firstSeen), lastSeen: Self.time(value.lastSeen),
                routes: Self.ranked(value.routes), examplePaths: value.examplePaths.texts, exampleMessages: value.exampleMessages.texts)
        }

        appVersions = options.byAppVersion ? Self.appVersionRows(s, fold: fold) : []

        let span = s.firstEvent.flatMap { f in s.lastEvent.map { Double($0.millisecondsSince1970 - f.millisecondsSince1970) / 1000 } } ?? 0
        sse = SSESection(
            connections: s.sse.opens, closes: s.sse.closes, reconnects: s.sse.reconnects, fails: s.sse.fails,
            reconnectsPerHour: span >= 60 ? Double(s.sse.reconnects) / (span / 3600) : nil,
            reasons: Self.ranked(s.sse.reasons).map { ($0.route, $0.count) }, reconnectDelay: Percentiles(s.sse.reconnectDelay),
            eventsPerConnection: Percentiles(s.sse.eventsPerConnection), meanEventsPerConnection: s.sse.eventsPerConnection.mean,
            routes: s.sse.routes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        webSocket = WebSocketSection(s.webSocket, spanSeconds: span)

        let base = s.timeSeries.granularitySeconds
        var bucket = options.bucketSeconds.map { max($0, base) } ?? TimeSeries.granularity(forSpanSeconds: Int64(span), minimum: base)
        if bucket % base != 0 { bucket = TimeSeries.granularity(forSpanSeconds: Int64(span), minimum: base) }
        timeSeries = TimeSeriesSection(bucketSeconds: bucket, points: s.timeSeries.points(granularity: bucket).map { start, b in
            let errors = b.requests.errors + (fold ? b.decodeFailures : 0)
            return TimeSeriesSection.Point(
                start: TraceTimestamp(millisecondsSince1970: start * 1000), requests: b.requests.requests, errors: errors,
                clientErrors: b.requests.clientErrors, decodeFailures: b.decodeFailures, errorRate: b.requests.ratio(errors))
        })
    }

    private static func routeRows(_ s: TraceSummary, fold: Bool) -> [RouteRow] {
        var rows: [RouteRow] = s.routes.map { key, value in
            let c = value.counts
            return RouteRow(
                method: key.method, route: key.route, requests: c.requests, estimatedRequests: c.estimatedRequests,
                serverErrors: c.serverErrors, clientErrors: c.clientErrors, transportErrors: c.transportErrors, decodeFailures: 0,
                errors: c.errors, errorRate: c.errorRate,
                sessionsWithErrors: Count(value.sessionsAffected.errors), sessionsWithClientErrors: Count(value.sessionsAffected.clientError), latency: Percentiles(value.latency), bytesIn: c.bytesIn, bytesOut: c.bytesOut)
        }
        rows.sort { ($0.requests, $1.route, $1.method) > ($1.requests, $0.route, $0.method) }
        // A decode failure names its route, not its method: give it to the route's busiest method.
        for (route, n) in s.decodeFailuresByRoute.sorted(by: { $0.key < $1.key }) {
            if let i = rows.firstIndex(where: { $0.route == route }) {
                rows[i].decodeFailures += n
            } else {
                rows.append(RouteRow(
                    method: "-", route: route, requests: 0, estimatedRequests: 0, serverErrors: 0, clientErrors: 0,
                    transportErrors: 0, decodeFailures: n, errors: 0, errorRate: 0,
                    sessionsWithErrors: Count(SessionCount()), sessionsWithClientErrors: Count(SessionCount()), latency: Percentiles(QuantileSketch()),
                    bytesIn: 0, bytesOut: 0))
            }
        }
        if fold {
            for i in rows.indices {
                rows[i].errors += rows[i].decodeFailures
                rows[i].errorRate = rows[i].estimatedRequests > 0 ? Double(rows[i].errors) / rows[i].estimatedRequests : 0
            }
        }
        return rows
    }

    /// A time in milliseconds, nil for the `Int64.max`/`.min` of "never".
    static func time(_ ms: Int64) -> TraceTimestamp? {
        ms == .max || ms == .min ? nil : TraceTimestamp(millisecondsSince1970: ms)
    }

    private static func appVersionRows(_ s: TraceSummary, fold: Bool) -> [AppVersionRow] {
        s.appVersions.map { version, v in
            let errors = v.requests.errors + (fold ? v.decodeFailures : 0)
            return AppVersionRow(
                appVersion: version, files: v.files, events: v.events, requests: v.requests.requests, errors: errors,
                errorRate: v.requests.ratio(errors), clientErrors: v.requests.clientErrors, decodeFailures: v.decodeFailures,
                recordedErrors: v.recordedErrors, sessionsAffected: Count(v.sessionsAffected),
                firstSeen: time(v.firstMs), lastSeen: time(v.lastMs))
        }.sorted { $0.appVersion.compare($1.appVersion, options: .numeric) == .orderedDescending }
    }

    static func ranked(_ counts: [String: Int]) -> [(route: String, count: Int)] {
        counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { ($0.key, $0.value) }
    }
}
