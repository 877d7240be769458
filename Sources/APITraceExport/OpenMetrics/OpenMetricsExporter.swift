public import APITraceFormat

/// Turns events into metrics in the OpenMetrics text format, for Prometheus (node_exporter's
/// textfile collector, or any scrape) and the Grafana dashboard in `Dashboards/`.
///
/// Names follow OpenTelemetry's HTTP client conventions where they exist
/// (`http.client.request.duration` becomes `http_client_request_duration_seconds`, attributes
/// become `http_request_method`, `url_template`, `server_address`, `http_response_status_code`,
/// `error_type`); apitrace's own metrics start with `apitrace_`. Request series also carry the
/// `app_version` of the trace file's header (decode failures too), so a dashboard can compare releases.
///
/// Counters are totals over the events added. To export a folder periodically without counters
/// falling when files are deleted, keep the exporter between runs with ``CumulativeExport``
/// (`apitrace export --state`): it adds each file's new events once and never forgets deleted ones.
/// The collector (`apitrace collect`) keeps one for its whole run and adds each file it stores.
///
/// ```swift
/// var metrics = OpenMetricsExporter()
/// TraceFileReader(path: file).forEachEvent { metrics.add($0, appVersion: header.appVersion) }
/// print(metrics.text())
/// ```
///
/// Cardinality is bounded (``Limits``): the first routes and error identities seen keep series of
/// their own, later ones are counted under `(other)`. First seen, not most counted: a series never
/// moves into `(other)` once it exists, so no counter ever falls.
public struct OpenMetricsExporter: Sendable, Codable {
    /// Upper bounds of the duration histogram, in seconds (OpenTelemetry's advice for HTTP durations).
    public static let durationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

    /// How many distinct label values the exporter keeps before counting the rest under `(other)`.
    public struct Limits: Sendable, Equatable {
        /// Distinct route templates (`url_template`) with series of their own. Default 1000.
        public var routes: Int
        /// Distinct error identities (`identity` of recorded errors, `error_type` of failed requests
        /// without a status). Default 1000.
        public var identities: Int
        /// Most series per family (label combinations); later ones are counted under a series whose
        /// every label is `(other)`, so one producer writing ids into routes cannot blow up a scrape. Default 1000.
        public var seriesPerFamily: Int

        /// Creates limits; each is at least 2 (one value of its own and `(other)`).
        public init(routes: Int = 1000, identities: Int = 1000, seriesPerFamily: Int = OpenMetricsExporter.maximumSeries) {
            self.routes = max(2, routes)
            self.identities = max(2, identities)
            self.seriesPerFamily = max(2, seriesPerFamily)
        }
    }

    /// The default most series per family keyed by file text (routes, identities, paths, reasons).
    public static let maximumSeries = 1000

    /// The label value that holds what is past a limit.
    public static let other = "(other)"

    struct RequestKey: Hashable, Codable { var method, route, host: String; var appVersion: String }
    struct RequestCountKey: Hashable, Codable { var request: RequestKey; var status: String; var errorType: String; var errorClass: String; var outcome: String }
    struct Histogram: Codable {
        var buckets = [Double](repeating: 0, count: OpenMetricsExporter.durationBuckets.count)
        var count = 0.0
        var sum = 0.0
    }

    /// The bounds in effect (not part of a saved state: a loaded state takes the defaults).
    public var limits = Limits()

    var requests: [RequestCountKey: Double] = [:]
    var durations: [RequestKey: Histogram] = [:]
    var decodeFailures: [[String]: Int] = [:]
    var errors: [[String]: Int] = [:]
    var sse: [[String]: Int] = [:]
    /// `websocket` events by phase, route, close-code class and abnormal (fixed label sets but the route).
    var websocket: [[String]: Int] = [:]
    var dropped: [[String]: Int] = [:]
    /// Routes and identities that have series of their own (the first seen).
    private(set) var routes: Set<String> = []
    private(set) var identities: Set<String> = []

    private enum CodingKeys: String, CodingKey {
        case requests, durations, decodeFailures, errors, sse, websocket, dropped, routes, identities
    }

    /// Creates an empty exporter with these bounds.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requests = try c.decode([RequestCountKey: Double].self, forKey: .requests)
        durations = try c.decode([RequestKey: Histogram].self, forKey: .durations)
        decodeFailures = try c.decode([[String]: Int].self, forKey: .decodeFailures)
        errors = try c.decode([[String]: Int].self, forKey: .errors)
        sse = try c.decode([[String]: Int].self, forKey: .sse)
        // States saved before WebSocket counters existed have none.
        websocket = (try c.decodeIfPresent([[String]: Int].self, forKey: .websocket) ?? [:]).filter { $0.key.count == 4 }
        dropped = try c.decode([[String]: Int].self, forKey: .dropped)
        // States written before the bounds were per label: the values already in the families count as seen.
        routes = try c.decodeIfPresent(Set<String>.self, forKey: .routes)
            ?? Set(durations.keys.map(\.route) + sse.keys.compactMap { $0.count > 1 ? $0[1] : nil } + decodeFailures.keys.compactMap { $0.count > 3 ? $0[3] : nil })
        identities = try c.decodeIfPresent(Set<String>.self, forKey: .identities) ?? Set(errors.keys.compactMap(\.first))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requests, forKey: .requests)
        try c.encode(durations, forKey: .durations)
        try c.encode(decodeFailures, forKey: .decodeFailures)
        try c.encode(errors, forKey: .errors)
        try c.encode(sse, forKey: .sse)
        try c.encode(websocket, forKey: .websocket)
        try c.encode(dropped, forKey: .dropped)
        try c.encode(routes, forKey: .routes)
        try c.encode(identities, forKey: .identities)
    }

    /// Counts one event of a file whose header names `appVersion` (the `app_version` label; empty when `nil`).
    public mutating func add(_ event: TraceEvent, appVersion: String? = nil) {
        switch event.payload {
        case .request(let r):
            addRequest(method: r.method, route: r.route, host: r.host ?? "", status: r.status, durationMs: r.durationMs,
                       error: r.error, outcome: r.outcome, weight: r.weight, appVersion: appVersion ?? "")
        case .decodeFailure(let d):
            // Indices folded: one series per key, not one per array element.
            addDecodeFailure(entity: d.entity, kind: d.kind.rawValue, pathPattern: d.pathPattern, route: d.route ?? "", appVersion: appVersion ?? "")
        case .error(let e):
            addError(identity: e.identity, count: (e.suppressed ?? 0).addingSaturated(1))
        case .sse(let s):
            addSSE(phase: s.phase.rawValue, route: s.route, reason: s.reason ?? "")
        case .websocket(let w):
            addWebSocket(phase: w.phase.rawValue, route: w.route, code: w.code)
        case .dropped(let d):
            addDropped(count: d.count, reason: d.reason)
        case .log:
            break
        }
    }

    // MARK: - Counting, shared by events and records

    /// Counts one request line that stands for `weight` requests (``RequestWeight``), in the counter
    /// and the histogram alike.
    mutating func addRequest(
        method: String, route: String, host: String, status: Int?, durationMs: Double, error: String?,
        outcome: RequestOutcome, weight: Double, appVersion: String
    ) {
        let seconds = durationMs / 1000
        addRequests(method: method, route: route, host: host, status: status, error: error, outcome: outcome, appVersion: appVersion, count: weight) { h in
            for (i, bound) in Self.durationBuckets.enumerated() where seconds <= bound { h.buckets[i] += weight }
            h.count += weight
            h.sum += seconds * weight
        }
    }

    /// Adds `count` requests of one series, and their durations with `durations`.
    mutating func addRequests(
        method: String, route: String, host: String, status: Int?, error: String?, outcome: RequestOutcome,
        appVersion: String, count: Double, durations: (inout Histogram) -> Void
    ) {
        let errorClass: String
        switch outcome {
        case .transport: errorClass = "transport"
        case .serverError: errorClass = "server"
        case .clientError: errorClass = "client"
        case .success, .cancelled, .offline: errorClass = ""
        }
        let statusText = status.map(String.init) ?? ""
        let errorType = error.map { bounded(identity: $0) } ?? (errorClass == "server" || errorClass == "client" ? statusText : "")
        addRequests(RequestCountKey(
            request: RequestKey(method: method, route: bounded(route: route), host: host, appVersion: appVersion),
            status: statusText, errorType: errorType, errorClass: errorClass, outcome: outcome.rawValue),
            count: count, durations: durations)
    }

    /// Adds `count` requests and their durations under `key` (already bounded per label), or under
    /// the all-`(other)` series once the family is full.
    private mutating func addRequests(_ key: RequestCountKey, count: Double, durations add: (inout Histogram) -> Void) {
        // Each key hashed once when its series exists (the common case): found by index, added in place.
        var key = key
        var histogram = durations.index(forKey: key.request)
        if histogram == nil, durations.count >= limits.seriesPerFamily - 1 {
            key.request = RequestKey(method: Self.other, route: Self.other, host: Self.other, appVersion: Self.other)
            histogram = durations.index(forKey: key.request)
        }
        var counter = requests.index(forKey: key)
        if counter == nil, requests.count >= limits.seriesPerFamily - 1 {
            key = RequestCountKey(request: key.request, status: Self.other, errorType: Self.other, errorClass: Self.other, outcome: Self.other)
            counter = requests.index(forKey: key)
        }
        if let counter { requests.values[counter] += count } else { requests[key] = count }
        if let histogram {
            add(&durations.values[histogram])
        } else {
            var new = Histogram()
            add(&new)
            durations[key.request] = new
        }
    }

    mutating func addDecodeFailure(entity: String, kind: String, pathPattern: String, route: String, appVersion: String, count: Int = 1) {
        add(count, to: [entity, kind, pathPattern, route.isEmpty ? route : bounded(route: route), appVersion], in: \.decodeFailures)
    }

    mutating func addError(identity: String, count: Int) {
        add(count, to: [bounded(identity: identity)], in: \.errors)
    }

    mutating func addSSE(phase: String, route: String, reason: String, count: Int = 1) {
        add(count, to: [phase, bounded(route: route), reason], in: \.sse)
    }

    /// Counts a `websocket` event. Only the route comes from the file as written (bounded like
    /// every route); the phase, the class of the close code and `abnormal` take a few fixed values
    /// whatever a hostile file holds.
    mutating func addWebSocket(phase: String, route: String, code: Int?) {
        let known = ["open", "close", "reconnect", "fail"].contains(phase)
        let ends = phase == "close" || phase == "fail"
        let codeClass = ends ? code.map { TraceEvent.WebSocket.reasonClass(ofCode: $0) } ?? "none" : ""
        let abnormal = phase == "close" ? (TraceEvent.WebSocket.isAbnormalClose(code: code) ? "true" : "false") : ""
        add(1, to: [known ? phase : "other", bounded(route: route), codeClass, abnormal], in: \.websocket)
    }

    mutating func addDropped(count: Int, reason: String) {
        add(count, to: [reason], in: \.dropped)
    }

    /// Adds every count of `other` (an exporter of one file, say), bounded by this exporter's limits.
    public mutating func merge(_ other: OpenMetricsExporter) {
        // A key's histogram goes with the first of its count series, so it is added once.
        var histogramGiven = Set<RequestKey>()
        for (key, count) in other.requests.sorted(by: { Self.sortKey($0.key).lexicographicallyPrecedes(Self.sortKey($1.key)) }) {
            var bounded = key
            bounded.request.route = key.request.route == Self.other ? Self.other : self.bounded(route: key.request.route)
            // error_type is an identity unless it is the status itself (a 4xx or 5xx without an error).
            if !key.errorType.isEmpty, key.errorType != key.status { bounded.errorType = self.bounded(identity: key.errorType) }
            let histogram = histogramGiven.insert(key.request).inserted ? other.durations[key.request] : nil
            addRequests(bounded, count: count) { h in
                guard let histogram else { return }
                for i in h.buckets.indices { h.buckets[i] += histogram.buckets[i] }
                h.count += histogram.count
                h.sum += histogram.sum
            }
        }
        for (key, count) in other.decodeFailures {
            addDecodeFailure(entity: key[0], kind: key[1], pathPattern: key[2], route: key[3], appVersion: key[4], count: count)
        }
        for (key, count) in other.errors { addError(identity: key[0], count: count) }
        for (key, count) in other.sse { addSSE(phase: key[0], route: key[1], reason: key[2], count: count) }
        for (key, count) in other.websocket.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) where key.count == 4 {
            add(count, to: [key[0], bounded(route: key[1]), key[2], key[3]], in: \.websocket)
        }
        for (key, count) in other.dropped { addDropped(count: count, reason: key[0]) }
    }

    // MARK: - Bounds

    /// `route`, or `(other)` once ``Limits/routes`` others have been seen.
    private mutating func bounded(route: String) -> String {
        if route == Self.other || routes.contains(route) { return route }
        guard routes.count < limits.routes - 1 else { return Self.other }
        routes.insert(route)
        return route
    }

    /// `identity`, or `(other)` once ``Limits/identities`` others have been seen.
    private mutating func bounded(identity: String) -> String {
        if identity == Self.other || identities.contains(identity) { return identity }
        guard identities.count < limits.identities - 1 else { return Self.other }
        identities.insert(identity)
        return identity
    }

    /// Adds `n` to a series, or to the all-`(other)` series once the family is full; saturating.
    private mutating func add(_ n: Int, to key: [String], in family: WritableKeyPath<OpenMetricsExporter, [[String]: Int]>) {
        let full = limits.seriesPerFamily - 1
        Self.add(n, to: key, in: &self[keyPath: family], full: full)
    }

    /// ``add(_:to:in:)`` on the family itself: the key hashed once when its series exists.
    private static func add(_ n: Int, to key: [String], in family: inout [[String]: Int], full: Int) {
        if let series = family.index(forKey: key) {
            family.values[series] = family.values[series].addingSaturated(n)
            return
        }
        let key = family.count < full ? key : key.map { _ in Self.other }
        family[key] = (family[key] ?? 0).addingSaturated(n)
    }

    /// Every label of a request series, so the order of the text is total (and two exports of the same counts are byte-identical).
    static func sortKey(_ key: RequestCountKey) -> [String] {
        [key.request.method, key.request.route, key.request.host, key.request.appVersion, key.status, key.errorType, key.outcome]
    }
}
