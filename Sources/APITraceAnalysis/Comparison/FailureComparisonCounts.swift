package import APITraceFormat

/// Requests and failures of a window and a baseline, per row of every dimension a comparison
/// explains (route, host, app version, app version on a route, error identity, decode path,
/// outcome class): the mergeable input of ``FailureComparison``.
///
/// Counts of separate files merge with ``merge(_:)``. Each dimension keeps at most
/// ``maximumRows`` distinct rows; later rows are counted together under `(other)`, so a trace of
/// random routes or identities cannot grow it without bound.
///
/// ```swift
/// var counts = FailureComparisonCounts()
/// counts.addRequest(.window, route: "/apps/{id}", host: "api.example.com", appVersion: "2.4.0",
///                   weight: 1, outcome: .serverError, identity: nil, status: 503)
/// let comparison = FailureComparison(counts)
/// ```
public struct FailureComparisonCounts: Sendable, Equatable {
    /// The two sides of a comparison.
    public enum Side: Int, Sendable, CaseIterable {
        /// The window being explained.
        case window
        /// What it is compared against.
        case baseline
    }

    /// Requests (sampled successes scaled back by ``RequestWeight``) and failures.
    public struct Tally: Sendable, Equatable {
        /// Requests, client-side outcomes (cancelled, offline) left out.
        public var requests: Double = 0
        /// Failures: failed requests plus decode failures.
        public var failures: Double = 0

        /// Creates a tally.
        public init(requests: Double = 0, failures: Double = 0) {
            self.requests = requests
            self.failures = failures
        }

        @inline(__always)
        mutating func add(_ other: Tally) {
            requests += other.requests
            failures += other.failures
        }
    }

    /// A row's tallies on both sides.
    public struct Pair: Sendable, Equatable {
        /// In the window.
        public var window = Tally()
        /// In the baseline.
        public var baseline = Tally()

        /// Creates an empty pair.
        public init() {}

        /// The tally of one side.
        public subscript(side: Side) -> Tally {
            get { side == .window ? window : baseline }
            set { if side == .window { window = newValue } else { baseline = newValue } }
        }

        @inline(__always)
        mutating func add(_ other: Pair) {
            window.add(other.window)
            baseline.add(other.baseline)
        }
    }

    /// A row of a dimension: one value, or two for ``FailureComparison/Dimension/appVersionRoute``
    /// (the app version, then the route).
    public struct RowKey: Sendable, Hashable, Comparable {
        /// The value, such as `/apps/{id}`; for app version on route, the app version.
        public var value: String
        /// The route, for app version on route.
        public var route: String?

        /// Creates a key.
        public init(_ value: String, route: String? = nil) {
            self.value = value
            self.route = route
        }

        /// Where rows past ``FailureComparisonCounts/maximumRows`` are counted.
        public static let other = RowKey("(other)")

        public static func < (a: RowKey, b: RowKey) -> Bool { (a.value, a.route ?? "") < (b.value, b.route ?? "") }
    }

    /// Most rows kept per dimension.
    package static let maximumRows = 1000

    /// Both sides in all.
    public var totals = Pair()
    /// Per dimension (in ``FailureComparison/Dimension/allCases`` order), per row.
    private var tables = [[RowKey: Pair]](repeating: [:], count: FailureComparison.Dimension.allCases.count)

    /// Creates empty counts.
    public init() {}

    /// The rows of one dimension.
    public func rows(of dimension: FailureComparison.Dimension) -> [RowKey: Pair] { tables[dimension.index] }

    /// True when neither side counted anything.
    public var isEmpty: Bool { totals == Pair() }

    // MARK: - Counting

    /// Counts a request under the comparison's failure definition: an error (`server_error` or
    /// `transport`, ``RequestOutcome/isFailure``) fails; cancelled and offline requests are the
    /// device's doing and are not counted at all.
    package mutating func addRequest(
        _ side: Side, route: String, host: String?, appVersion: String, weight: Double,
        outcome: RequestOutcome, identity: String?, status: Int?
    ) {
        guard !outcome.isClientSide else { return }
        addRequest(side, route: route, host: host, appVersion: appVersion, weight: weight,
                   failed: outcome.isFailure, failureClass: outcome.rawValue,
                   identity: identity ?? status.map { "HTTP \($0)" } ?? "transport failure")
    }

    /// Counts a request whose failure a caller decided (an alert rule's own failure definition):
    /// a failed request counts 1, any other `weight` (``RequestWeight``).
    package mutating func addRequest(
        _ side: Side, route: String, host: String?, appVersion: String, weight: Double,
        failed: Bool, failureClass: String, identity: String
    ) {
        let tally = failed ? Tally(requests: 1, failures: 1) : Tally(requests: weight, failures: 0)
        add(tally, side, .route, RowKey(route))
        add(tally, side, .host, RowKey(host ?? "-"))
        add(tally, side, .appVersion, RowKey(appVersion))
        add(tally, side, .appVersionRoute, RowKey(appVersion, route: route))
        totals[side].add(tally)
        guard failed else { return }
        let failure = Tally(requests: 0, failures: 1)
        add(failure, side, .errorIdentity, RowKey(identity))
        add(failure, side, .outcomeClass, RowKey(failureClass))
    }

    /// Counts a decode failure: a failure without a request of its own (its request was counted
    /// when it was answered). Decode failures carry no server host, so the host dimension leaves them out.
    package mutating func addDecodeFailure(_ side: Side, route: String?, appVersion: String, decodePath: String) {
        let failure = Tally(requests: 0, failures: 1)
        let route = route ?? "-"
        add(failure, side, .route, RowKey(route))
        add(failure, side, .appVersion, RowKey(appVersion))
        add(failure, side, .appVersionRoute, RowKey(appVersion, route: route))
        add(failure, side, .decodePath, RowKey(decodePath))
        add(failure, side, .outcomeClass, RowKey("decode_failure"))
        totals[side].add(failure)
    }

    /// Adds a pair of tallies to a row (a file's counts, gathered by ``FileTally``).
    mutating func add(_ pair: Pair, _ dimension: FailureComparison.Dimension, _ key: RowKey) {
        let i = dimension.index
        let key = tables[i][key] != nil || tables[i].count < Self.maximumRows - 1 ? key : .other
        tables[i][key, default: Pair()].add(pair)
    }

    @inline(__always)
    private mutating func add(_ tally: Tally, _ side: Side, _ dimension: FailureComparison.Dimension, _ key: RowKey) {
        let i = dimension.index
        let key = tables[i][key] != nil || tables[i].count < Self.maximumRows - 1 ? key : .other
        tables[i][key, default: Pair()][side].add(tally)
    }

    /// Adds another set of counts (another file's, another worker's).
    public mutating func merge(_ other: FailureComparisonCounts) {
        totals.add(other.totals)
        for i in tables.indices {
            for (key, pair) in other.tables[i] {
                let key = tables[i][key] != nil || tables[i].count < Self.maximumRows - 1 ? key : .other
                tables[i][key, default: Pair()].add(pair)
            }
        }
    }
}
