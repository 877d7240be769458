package import APITraceAnalysis
import APITraceFormat

/// What failed during a rule's evidence window: routes, error identities, decode-failure paths.
package struct EvidenceTally: Sendable, Equatable {
    /// Per route: failures and requests.
    package var routes: [String: WindowTotals] = [:]
    /// Per error identity (a failed request's `error`, `HTTP 503` for a status, or a recorded error's identity): occurrences.
    package var errorIdentities: [String: Int] = [:]
    /// Per decode-failure path (`Entity path`, array indices folded to `[*]`): occurrences.
    package var decodePaths: [String: Int] = [:]
    /// The evidence window against the baseline before it, under the rule's failure definition
    /// (``FailureComparisonCounts``): what accounts for the extra failures.
    package var comparison = FailureComparisonCounts()

    /// Creates an empty tally.
    package init() {}

    /// Most routes kept; the rest are tallied under `(other)`, so a file of random routes stays small.
    static let maximumRoutes = 100

    mutating func add(route: String, requests: Double, failures: Double) {
        let key = routes[route] != nil || routes.count < Self.maximumRoutes - 1 ? route : "(other)"
        var t = routes[key] ?? WindowTotals(requests: 0, failures: 0)
        t.requests += requests
        t.failures += failures
        routes[key] = t
    }

    mutating func add(route: String, requests: Double, failed: Bool) {
        add(route: route, requests: requests, failures: failed ? 1 : 0)
    }

    mutating func merge(_ other: EvidenceTally) {
        for (k, v) in other.routes { add(route: k, requests: v.requests, failures: v.failures) }
        errorIdentities.mergeBounded(other.errorIdentities)
        decodePaths.mergeBounded(other.decodePaths)
        comparison.merge(other.comparison)
    }
}
