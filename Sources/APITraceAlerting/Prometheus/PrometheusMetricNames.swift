/// The metric and label names the rules translation queries: those `apitrace export --format
/// prometheus` writes and the collector exposes (OpenTelemetry HTTP client names where they exist).
package enum PrometheusMetricNames {
    /// Requests by method, route template, status, error type, outcome class and app version.
    package static let requests = "apitrace_http_client_requests_total"
    /// The request duration histogram (`_bucket`, `_count`, `_sum`).
    package static let duration = "http_client_request_duration_seconds"
    /// Decode failures by entity, kind, folded path, route template and app version.
    package static let decodeFailures = "apitrace_decode_failures_total"

    /// WebSocket connection changes by phase, route template, close-code class and `abnormal`.
    package static let webSocketEvents = "apitrace_websocket_events_total"

    /// Route template label.
    package static let route = "url_template"
    /// Server host label.
    package static let host = "server_address"
    /// App version label (from the trace file's header).
    package static let appVersion = "app_version"
    /// HTTP status code label; absent (empty) when the request got no response.
    package static let status = "http_response_status_code"
    /// Error identity label (`URLError.timedOut`) or the status of a 4xx/5xx.
    package static let errorType = "error_type"
    /// Outcome class label: success, client_error, server_error, transport, cancelled, offline.
    package static let outcome = "outcome"
    /// Upper bounds of the duration histogram, in seconds, as the exporter writes them.
    package static let durationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
}
