import APITraceFormat

extension OpenMetricsExporter {
    /// The metrics as OpenMetrics text, ending with `# EOF`.
    public func text() -> String {
        var unused: Set<String>? = nil
        return text(endOfFile: true, announcing: &unused)
    }

    /// The metrics as OpenMetrics text, with `# EOF` at the end when `endOfFile` (leave it out to
    /// append other families).
    ///
    /// With `announced` (the series shown by earlier calls), a series not in it is shown at 0 and
    /// added to it; its count shows from the next call on. Prometheus takes a series' first sample
    /// as its start, not as an increase, so a series that first appeared with its count would hide
    /// those events from `rate()` and `increase()`; the collector, whose counters start at ingest,
    /// announces every new series at 0 for one scrape.
    package func text(endOfFile: Bool, announcing announced: inout Set<String>?) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, unit: String? = nil) {
            out += "# TYPE \(name) \(type)\n"
            if let unit { out += "# UNIT \(name) \(unit)\n" }
            out += "# HELP \(name) \(help)\n"
        }
        func labels(_ pairs: [(String, String)]) -> String {
            "{" + pairs.map { "\($0.0)=\"\(TextEscaping.openMetricsLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        func number(_ v: Double) -> String {
            v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        }
        func sample(_ series: String, _ value: String) {
            if announced != nil, announced!.insert(series).inserted {
                out += series + " 0\n"
            } else {
                out += series + " " + value + "\n"
            }
        }

        family("http_client_request_duration_seconds", "histogram", "Duration of HTTP client requests (OpenTelemetry http.client.request.duration).", unit: "seconds")
        for (key, h) in durations.sorted(by: { ($0.key.method, $0.key.route, $0.key.host, $0.key.appVersion) < ($1.key.method, $1.key.route, $1.key.host, $1.key.appVersion) }) {
            let base = [("http_request_method", key.method), ("url_template", key.route), ("server_address", key.host), ("app_version", key.appVersion)]
            for (i, bound) in Self.durationBuckets.enumerated() {
                sample("http_client_request_duration_seconds_bucket\(labels(base + [("le", String(bound))]))", number(h.buckets[i]))
            }
            sample("http_client_request_duration_seconds_bucket\(labels(base + [("le", "+Inf")]))", number(h.count))
            sample("http_client_request_duration_seconds_count\(labels(base))", number(h.count))
            sample("http_client_request_duration_seconds_sum\(labels(base))", number(h.sum))
        }

        family("apitrace_http_client_requests", "counter", "HTTP client requests; outcome is success, client_error, server_error, transport, cancelled or offline (Docs/trace-format.md); error_class is server (5xx), transport (no response), client (4xx) or empty; app_version is the trace file header's. Sampled successes are scaled back.")
        for (key, value) in requests.sorted(by: { Self.sortKey($0.key).lexicographicallyPrecedes(Self.sortKey($1.key)) }) {
            sample("apitrace_http_client_requests_total\(labels([("http_request_method", key.request.method), ("url_template", key.request.route), ("server_address", key.request.host), ("app_version", key.request.appVersion), ("http_response_status_code", key.status), ("error_type", key.errorType), ("error_class", key.errorClass), ("outcome", key.outcome)]))", number(value))
        }

        family("apitrace_decode_failures", "counter", "Responses that did not decode into their model, by entity, kind and key path.")
        for (key, value) in decodeFailures.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            sample("apitrace_decode_failures_total\(labels([("entity", key[0]), ("kind", key[1]), ("path", key[2]), ("url_template", key[3]), ("app_version", key[4])]))", String(value))
        }

        family("apitrace_recorded_errors", "counter", "Errors recorded with recordError, by identity (rate-limited ones included).")
        for (key, value) in errors.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            sample("apitrace_recorded_errors_total\(labels([("identity", key[0])]))", String(value))
        }

        family("apitrace_sse_events", "counter", "Server-Sent Events connection changes: phase is open, close, reconnect or fail.")
        for (key, value) in sse.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            sample("apitrace_sse_events_total\(labels([("phase", key[0]), ("url_template", key[1]), ("reason", key[2])]))", String(value))
        }

        family("apitrace_websocket_events", "counter", "WebSocket connection changes: phase is open, close, reconnect, fail or other; close_code_class is the class of the close code (normal, going_away, abnormal, server_error, policy, application... none without a code) for close and fail; abnormal is true for a close other than 1000 or 1001.")
        for (key, value) in websocket.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            sample("apitrace_websocket_events_total\(labels([("phase", key[0]), ("url_template", key[1]), ("close_code_class", key[2]), ("abnormal", key[3])]))", String(value))
        }

        family("apitrace_dropped_events", "counter", "Events producers had to drop, by reason, as they reported it.")
        for (key, value) in dropped.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            sample("apitrace_dropped_events_total\(labels([("reason", key[0])]))", String(value))
        }
        if endOfFile { out += "# EOF\n" }
        return out
    }
}
