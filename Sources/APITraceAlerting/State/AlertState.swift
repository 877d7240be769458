import APITraceFormat

/// What `apitrace alert` remembers between runs: open incidents, mutes, deliveries to retry.
///
/// Stored as JSON in the state file (`--state`), written atomically under a lock by ``StateStore``.
package struct AlertState: Sendable, Equatable, Codable {
    /// Format version of the state file.
    package var version = AlertState.currentVersion
    /// The state format version this apitrace reads and writes; a newer file is refused, not rewritten.
    package static let currentVersion = 1
    /// Open incidents by rule name.
    package var incidents: [String: Incident] = [:]
    /// Mutes, active and expired-but-not-yet-pruned.
    package var mutes: [Mute] = []
    /// Notifications whose delivery failed, retried on the next run.
    package var pending: [PendingDelivery] = []
    /// The most recently closed incidents, newest last (at most 50).
    package var closed: [Incident] = []
    /// When the last run evaluated (RFC 3339).
    package var lastRun: String?

    /// Creates an empty state.
    package init() {}

    /// The mute that silences `rule` (and, for a grouped rule, its `group`) at `now`, if any: a
    /// mute without a group silences every group of its rule, one with a group only that group.
    package func activeMute(for rule: String, group: AlertGroup? = nil, at now: Int64) -> Mute? {
        mutes.first {
            $0.until > now && $0.created <= now && ($0.rule == nil || $0.rule == rule) && ($0.group == nil || $0.group == group?.label)
        }
    }

    /// Drops mutes that ended before `now`.
    package mutating func pruneMutes(at now: Int64) {
        mutes.removeAll { $0.until <= now }
    }
}
