import Foundation

/// Alert rules files the rules tests of the library and of the CLI share.
public enum AlertRuleFixtures {
    /// The repository's `Samples/alert-rules.yaml`.
    public static let samplesPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Samples/alert-rules.yaml").path

    /// Latency, route, app version, error lists, a spike over the trailing day, no confidence check.
    public static let fleet = """
        rules:
          - name: api-errors
            slo: 0.99
          - name: apps-route
            scope: {route: "/apps/{id}"}
            slo: 0.99
            confidence: none
          - name: v2-news
            scope: {route: "/news*", app_version: "2.1.0"}
            failure: {statuses: [5xx, 429], transport: true, decode_failures: true, include_errors: ["URLError.notConnectedToInternet"], exclude_errors: ["URLError.cannotFindHost"]}
            slo: 0.995
            burn_rate: [{long: 1h30m, short: 10m, factor: 10}]
            recent_window: 2m
          - name: slow-search
            scope: {route: "/search"}
            slo: 0.95
            latency_ms: 1000
            min_requests: 20
          - name: odd-latency
            slo: 0.9
            latency_ms: 800
          - name: new-failures
            new_failures: {baseline: 7d, window: 1h}
          - name: checkout-spike
            scope: {host: api.example.com}
            failure: {decode_failures: true}
            spike: {window: 30m, baseline: trailing_day, factor: 3, min_increase: 0.02}
        """
}
