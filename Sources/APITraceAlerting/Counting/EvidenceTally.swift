/// What failed during a rule's evidence window: routes, error identities, decode-failure paths.
public struct EvidenceTally: Sendable, Equatable {
    /// Per route: failures and requests.
    public var routes: [String: WindowTotals] = [:]
    /// Per error identity (a failed request's `error`, `HTTP 503` for a status, or a recorded error's identity): occurrences.
    public var errorIdentities: [String: Int] = [:]
    /// Per decode-failure path (`Entity path`, array indices folded to `[*]`): occurrences.
    public var decodePaths: [String: Int] = [:]

    /// Creates an empty tally.
    public init() {}

    mutating func merge(_ other: EvidenceTally) {
        for (k, v) in other.routes {
            var t = routes[k] ?? WindowTotals(requests: 0, failures: 0)
            t.requests += v.requests
            t.failures += v.failures
            routes[k] = t
        }
        errorIdentities.merge(other.errorIdentities, uniquingKeysWith: +)
        decodePaths.merge(other.decodePaths, uniquingKeysWith: +)
    }
}
