import APITraceFormat

/// What changed between a baseline and a window: for each dimension, the rows that account for
/// the most **excess failures** (failures beyond what the baseline predicts), largest first.
///
/// For a row `k` of a dimension, with window requests `n(k)` and failures `f(k)`:
///
/// - **traffic dimensions** (route, host, app version, app version on route) split requests:
///   `expected(k) = n(k) × rate_b(k)`, where `rate_b(k)` is the row's own baseline failure rate
///   (baseline failures / baseline requests). A row without baseline requests takes its parent's
///   rate: the route's for app version on route, else the whole baseline's rate.
/// - **failure dimensions** (error identity, decode path, outcome class) split failures only:
///   `expected(k) = N × f_b(k) / N_b`, the row's baseline share of all traffic applied to the
///   window's `N` requests (0 for a row absent from the baseline).
/// - `excess(k) = max(0, f(k) − expected(k))`, and the row's **share** is `excess(k)` divided by
///   the sum of `excess` over the rows of its dimension: "91% of the extra failures".
///
/// A baseline without requests predicts no failures (every window failure is excess, and
/// ``baselineHasTraffic`` is false). Requests are weighted by ``RequestWeight`` (a sampled success
/// stands for `1 / sample_rate` requests); failures count 1 each.
///
/// ```swift
/// let comparison = FailureComparison(counts, limit: 5)
/// comparison.headline?.sentence   // "91% of the extra failures: /apps/{id} on app 2.4.0"
/// ```
public struct FailureComparison: Sendable, Equatable {
    /// What a comparison is broken down by.
    public enum Dimension: String, Sendable, CaseIterable, Hashable {
        /// The request's route template.
        case route
        /// The request's server host.
        case host
        /// The file header's `app_version` (`-` without one).
        case appVersion = "app_version"
        /// App version and route together.
        case appVersionRoute = "app_version_route"
        /// A failed request's error identity (`HTTP 503` for a status without one).
        case errorIdentity = "error_identity"
        /// A decode failure's `Entity path` (array indices folded to `[*]`).
        case decodePath = "decode_path"
        /// `server_error`, `transport` or `decode_failure`.
        case outcomeClass = "outcome"

        /// Position in ``allCases``.
        var index: Int {
            switch self {
            case .route: 0
            case .host: 1
            case .appVersion: 2
            case .appVersionRoute: 3
            case .errorIdentity: 4
            case .decodePath: 5
            case .outcomeClass: 6
            }
        }

        /// True for dimensions that split requests (their rows have a failure rate of their own);
        /// false for those that split failures only (their rows have a share of all traffic).
        public var splitsRequests: Bool {
            switch self {
            case .route, .host, .appVersion, .appVersionRoute: true
            case .errorIdentity, .decodePath, .outcomeClass: false
            }
        }

        /// Heading in reports, such as `App version on route`.
        public var title: String {
            switch self {
            case .route: "Route"
            case .host: "Host"
            case .appVersion: "App version"
            case .appVersionRoute: "App version on route"
            case .errorIdentity: "Error identity"
            case .decodePath: "Decode path"
            case .outcomeClass: "Outcome class"
            }
        }
    }

    /// Where a row's expected failures came from.
    public enum Expectation: String, Sendable, Equatable {
        /// The row's own baseline.
        case row
        /// The row was absent from the baseline; its route's baseline rate was used.
        case route
        /// The row was absent from the baseline; the whole baseline's rate was used.
        case overall
        /// The baseline had no requests: no failures were expected.
        case none
    }

    /// One row and its share of the excess failures.
    public struct Row: Sendable, Equatable {
        /// Its dimension.
        public var dimension: Dimension
        /// The value (the app version, for app version on route).
        public var value: String
        /// The route, for app version on route.
        public var route: String?
        /// Requests and failures in the window.
        public var window: FailureComparisonCounts.Tally
        /// Requests and failures in the baseline.
        public var baseline: FailureComparisonCounts.Tally
        /// Window failure rate: failures per request of the row (traffic dimensions) or of all
        /// traffic (failure dimensions).
        public var windowRate: Double
        /// The baseline rate the expectation used.
        public var baselineRate: Double
        /// Where ``baselineRate`` came from.
        public var expectation: Expectation
        /// Failures the baseline predicts for the window.
        public var expectedFailures: Double
        /// `max(0, window failures − expected)`.
        public var excessFailures: Double
        /// Excess as a fraction of the dimension's total excess (0 when there is none).
        public var share: Double

        /// The row as a reader says it: `/apps/{id}`, `app 2.4.0`, `/apps/{id} on app 2.4.0`.
        public var label: String {
            switch dimension {
            case .appVersion: return value == "-" ? "files without app_version" : "app \(value)"
            case .appVersionRoute:
                let route = route ?? "-"
                return value == "-" ? route : "\(route) on app \(value)"
            default: return value
            }
        }

        /// `91% of the extra failures: /apps/{id} on app 2.4.0`.
        public var sentence: String { "\(ReportNumberFormatting.wholePercent(share)) of the extra failures: \(label)" }
    }

    /// One dimension's ranking.
    public struct Ranking: Sendable, Equatable {
        /// The dimension.
        public var dimension: Dimension
        /// Rows with excess failures, most first (at most the limit).
        public var rows: [Row]
        /// Rows with excess failures not listed.
        public var rowsOmitted: Int
        /// Sum of the excess over all rows of the dimension: the denominator of each share.
        public var totalExcess: Double
    }

    /// Requests and failures of the whole window.
    public var window: FailureComparisonCounts.Tally
    /// Requests and failures of the whole baseline.
    public var baseline: FailureComparisonCounts.Tally
    /// `max(0, window failures − window requests × baseline failure rate)` over all traffic.
    public var excessFailures: Double
    /// False when the baseline holds no requests (no failure was expected).
    public var baselineHasTraffic: Bool
    /// Per dimension, in ``Dimension/allCases`` order.
    public var rankings: [Ranking]

    /// Ranks the rows of `counts`, listing at most `limit` per dimension.
    public init(_ counts: FailureComparisonCounts, limit: Int = 5) {
        window = counts.totals.window
        baseline = counts.totals.baseline
        baselineHasTraffic = baseline.requests > 0
        let overallRate = baselineHasTraffic ? baseline.failures / baseline.requests : 0
        excessFailures = max(0, window.failures - window.requests * overallRate)
        let routes = counts.rows(of: .route)
        var rankings: [Ranking] = []
        for dimension in Dimension.allCases {
            var rows: [Row] = []
            for (key, pair) in counts.rows(of: dimension) {
                let rate: Double, expectation: Expectation, windowRate: Double
                if !baselineHasTraffic {
                    (rate, expectation) = (0, .none)
                } else if !dimension.splitsRequests {
                    (rate, expectation) = (pair.baseline.failures / baseline.requests, .row)
                } else if pair.baseline.requests > 0 {
                    (rate, expectation) = (pair.baseline.failures / pair.baseline.requests, .row)
                } else if dimension == .appVersionRoute, let r = routes[.init(key.route ?? "-")], r.baseline.requests > 0 {
                    (rate, expectation) = (r.baseline.failures / r.baseline.requests, .route)
                } else {
                    (rate, expectation) = (overallRate, .overall)
                }
                let exposure = dimension.splitsRequests ? pair.window.requests : window.requests
                let expected = exposure * rate
                if dimension.splitsRequests {
                    windowRate = pair.window.requests > 0 ? pair.window.failures / pair.window.requests : (pair.window.failures > 0 ? 1 : 0)
                } else {
                    windowRate = window.requests > 0 ? pair.window.failures / window.requests : 0
                }
                rows.append(Row(
                    dimension: dimension, value: key.value, route: key.route, window: pair.window, baseline: pair.baseline,
                    windowRate: windowRate, baselineRate: rate, expectation: expectation, expectedFailures: expected,
                    excessFailures: max(0, pair.window.failures - expected), share: 0))
            }
            let total = rows.reduce(0) { $0 + $1.excessFailures }
            var ranked = rows.filter { $0.excessFailures > 0 }
            for i in ranked.indices { ranked[i].share = total > 0 ? ranked[i].excessFailures / total : 0 }
            ranked.sort { ($0.excessFailures, $1.value, $1.route ?? "") > ($1.excessFailures, $0.value, $0.route ?? "") }
            let listed = Array(ranked.prefix(max(0, limit)))
            rankings.append(Ranking(dimension: dimension, rows: listed, rowsOmitted: ranked.count - listed.count, totalExcess: total))
        }
        self.rankings = rankings
    }

    /// The ranking of one dimension.
    public func ranking(_ dimension: Dimension) -> Ranking { rankings[dimension.index] }

    /// The one row that explains the most: among the top rows of app version on route, route,
    /// host and app version, the one with the highest `share × (1 − its fraction of the window's
    /// requests)`, a row that accounts for most of the extra failures while carrying little of
    /// the traffic (the only host, or the only app version, explains nothing); ties go to the more
    /// specific dimension, in that order. When that is a route or an app version and the top row of
    /// app version on route lies within it with at least 80% of its excess, that more specific row
    /// is the headline. Nil when nothing is in excess.
    public var headline: Row? {
        var best: (row: Row, score: Double)?
        for dimension in [Dimension.appVersionRoute, .route, .host, .appVersion] {
            guard let row = ranking(dimension).rows.first else { continue }
            let traffic = window.requests > 0 ? min(1, row.window.requests / window.requests) : 0
            let score = row.share * (1 - traffic)
            if best == nil || score > best!.score { best = (row, score) }
        }
        guard let chosen = best?.row else { return nil }
        if let combined = ranking(.appVersionRoute).rows.first, combined.excessFailures >= 0.8 * chosen.excessFailures,
           (chosen.dimension == .route && combined.route == chosen.value) || (chosen.dimension == .appVersion && combined.value == chosen.value) {
            return combined
        }
        return chosen
    }
}
