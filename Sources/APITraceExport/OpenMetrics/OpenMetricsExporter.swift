import APITraceFormat

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
///
/// ```swift
/// var metrics = OpenMetricsExporter()
/// TraceFileReader(path: file).forEachEvent { metrics.add($0, appVersion: header.appVersion) }
/// print(metrics.text())
/// ```
public struct OpenMetricsExporter: Sendable, Codable {
    /// Upper bounds of the duration histogram, in seconds (OpenTelemetry's advice for HTTP durations).
    public static let durationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

    private struct RequestKey: Hashable, Codable { var method, route, host: String; var appVersion: String }
    private struct RequestCountKey: Hashable, Codable { var request: RequestKey; var status: String; var errorType: String; var errorClass: String; var outcome: String }
    private struct Histogram: Codable { var buckets = [Double](repeating: 0, count: OpenMetricsExporter.durationBuckets.count); var count = 0.0; var sum = 0.0 }

    /// Most series per family keyed by file text (routes, identities, paths, reasons); later keys
    /// are counted under `(other)`, so one producer writing ids into routes cannot blow up a scrape.
    public static let maximumSeries = 1000

    private var requests: [RequestCountKey: Double] = [:]
    private var durations: [RequestKey: Histogram] = [:]
    private var decodeFailures: [[String]: Int] = [:]
    private var errors: [[String]: Int] = [:]
    private var sse: [[String]: Int] = [:]
    private var dropped: [[String]: Int] = [:]

    /// Adds `n` to a series, or to the `(other)` series once the family is full; saturating.
    private static func add(_ n: Int, to key: [String], in family: inout [[String]: Int]) {
        let key = family[key] != nil || family.count < maximumSeries - 1 ? key : key.map { _ in "(other)" }
        family[key] = (family[key] ?? 0).addingSaturated(n)
    }

    /// Creates an empty exporter.
    public init() {}

    /// Counts one event of a file whose header names `appVersion` (the `app_version` label; empty when `nil`).
    public mutating func add(_ event: TraceEvent, appVersion: String? = nil) {
        switch event.payload {
        case .request(let r):
            var key = RequestKey(method: r.method, route: r.route, host: r.host ?? "", appVersion: appVersion ?? "")
            if durations[key] == nil, durations.count >= Self.maximumSeries - 1 { key = RequestKey(method: "(other)", route: "(other)", host: "(other)", appVersion: "(other)") }
            let outcome = r.outcome
            let errorClass: String
            switch outcome {
            case .transport: errorClass = "transport"
            case .serverError: errorClass = "server"
            case .clientError: errorClass = "client"
            case .success, .cancelled, .offline: errorClass = ""
            }
            let errorType = r.error ?? (errorClass == "server" || errorClass == "client" ? String(r.status!) : "")
            // A sampled success line stands for 1 / sample_rate requests, in the counter and the histogram alike.
            let weight = RequestWeight.of(outcome: outcome, sampleRate: r.sampleRate).weight
            requests[RequestCountKey(request: key, status: r.status.map(String.init) ?? "", errorType: errorType, errorClass: errorClass, outcome: outcome.rawValue), default: 0] += weight
            var histogram = durations[key] ?? Histogram()
            let seconds = r.durationMs / 1000
            for (i, bound) in Self.durationBuckets.enumerated() where seconds <= bound { histogram.buckets[i] += weight }
            histogram.count += weight
            histogram.sum += seconds * weight
            durations[key] = histogram
        case .decodeFailure(let d):
            // Indices folded: one series per key, not one per array element.
            Self.add(1, to: [d.entity, d.kind.rawValue, d.pathPattern, d.route ?? "", appVersion ?? ""], in: &decodeFailures)
        case .error(let e):
            Self.add((e.suppressed ?? 0).addingSaturated(1), to: [e.identity], in: &errors)
        case .sse(let s):
            Self.add(1, to: [s.phase.rawValue, s.route, s.reason ?? ""], in: &sse)
        case .dropped(let d):
            Self.add(d.count, to: [d.reason], in: &dropped)
        case .log:
            break
        }
    }

    /// The metrics as OpenMetrics text, ending with `# EOF`.
    public func text() -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, unit: String? = nil) {
            out += "# TYPE \(name) \(type)\n"
            if let unit { out += "# UNIT \(name) \(unit)\n" }
            out += "# HELP \(name) \(help)\n"
        }
        func labels(_ pairs: [(String, String)]) -> String {
            "{" + pairs.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        func number(_ v: Double) -> String {
            v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        }

        family("http_client_request_duration_seconds", "histogram", "Duration of HTTP client requests (OpenTelemetry http.client.request.duration).", unit: "seconds")
        for (key, h) in durations.sorted(by: { ($0.key.method, $0.key.route, $0.key.host, $0.key.appVersion) < ($1.key.method, $1.key.route, $1.key.host, $1.key.appVersion) }) {
            let base = [("http_request_method", key.method), ("url_template", key.route), ("server_address", key.host), ("app_version", key.appVersion)]
            for (i, bound) in Self.durationBuckets.enumerated() {
                out += "http_client_request_duration_seconds_bucket\(labels(base + [("le", String(bound))])) \(number(h.buckets[i]))\n"
            }
            out += "http_client_request_duration_seconds_bucket\(labels(base + [("le", "+Inf")])) \(number(h.count))\n"
            out += "http_client_request_duration_seconds_count\(labels(base)) \(number(h.count))\n"
            out += "http_client_request_duration_seconds_sum\(labels(base)) \(number(h.sum))\n"
        }

        family("apitrace_http_client_requests", "counter", "HTTP client requests; outcome is success, client_error, server_error, transport, cancelled or offline (Docs/trace-format.md); error_class is server (5xx), transport (no response), client (4xx) or empty; app_version is the trace file header's. Sampled successes are scaled back.")
        for (key, value) in requests.sorted(by: { Self.sortKey($0.key).lexicographicallyPrecedes(Self.sortKey($1.key)) }) {
            out += "apitrace_http_client_requests_total\(labels([("http_request_method", key.request.method), ("url_template", key.request.route), ("server_address", key.request.host), ("app_version", key.request.appVersion), ("http_response_status_code", key.status), ("error_type", key.errorType), ("error_class", key.errorClass), ("outcome", key.outcome)])) \(number(value))\n"
        }

        family("apitrace_decode_failures", "counter", "Responses that did not decode into their model, by entity, kind and key path.")
        for (key, value) in decodeFailures.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "apitrace_decode_failures_total\(labels([("entity", key[0]), ("kind", key[1]), ("path", key[2]), ("url_template", key[3]), ("app_version", key[4])])) \(value)\n"
        }

        family("apitrace_recorded_errors", "counter", "Errors recorded with recordError, by identity (rate-limited ones included).")
        for (key, value) in errors.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "apitrace_recorded_errors_total\(labels([("identity", key[0])])) \(value)\n"
        }

        family("apitrace_sse_events", "counter", "Server-Sent Events connection changes: phase is open, close, reconnect or fail.")
        for (key, value) in sse.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "apitrace_sse_events_total\(labels([("phase", key[0]), ("url_template", key[1]), ("reason", key[2])])) \(value)\n"
        }

        family("apitrace_dropped_events", "counter", "Events producers had to drop, by reason, as they reported it.")
        for (key, value) in dropped.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            out += "apitrace_dropped_events_total\(labels([("reason", key[0])])) \(value)\n"
        }
        out += "# EOF\n"
        return out
    }

    /// Every label of a request series, so the order of the text is total (and two exports of the same counts are byte-identical).
    private static func sortKey(_ key: RequestCountKey) -> [String] {
        [key.request.method, key.request.route, key.request.host, key.request.appVersion, key.status, key.errorType, key.outcome]
    }

    /// Label values escape backslash, double quote and line feed, scalar by scalar (`"\r\n"` is one
    /// `Character` but two scalars); other control characters, which the format cannot escape and
    /// which break scrapers, become U+FFFD.
    static func escape(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        for c in value.unicodeScalars {
            switch c {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case _ where c.value < 0x20 || (0x7F...0x9F).contains(c.value) || c == "\u{2028}" || c == "\u{2029}":
                out.append("\u{FFFD}")
            default: out.append(c)
            }
        }
        return String(out)
    }
}
