import APITraceFormat

/// What `apitrace alert` remembers between runs: open incidents, mutes, deliveries to retry.
///
/// Stored as JSON in the state file (`--state`), written atomically under a lock by ``StateStore``.
public struct AlertState: Sendable, Equatable, Codable {
    /// Format version of the state file.
    public var version = 1
    /// Open incidents by rule name.
    public var incidents: [String: Incident] = [:]
    /// Mutes, active and expired-but-not-yet-pruned.
    public var mutes: [Mute] = []
    /// Notifications whose delivery failed, retried on the next run.
    public var pending: [PendingDelivery] = []
    /// The most recently closed incidents, newest last (at most 50).
    public var closed: [Incident] = []
    /// When the last run evaluated (RFC 3339).
    public var lastRun: String?

    /// Creates an empty state.
    public init() {}

    /// The mute that silences `rule` at `now`, if any.
    public func activeMute(for rule: String, at now: Int64) -> Mute? {
        mutes.first { $0.until > now && $0.created <= now && ($0.rule == nil || $0.rule == rule) }
    }

    /// Drops mutes that ended before `now`.
    public mutating func pruneMutes(at now: Int64) {
        mutes.removeAll { $0.until <= now }
    }
}

/// One incident: a rule firing, from its first firing evaluation until it stays recovered.
public struct Incident: Sendable, Equatable, Codable {
    /// Stable id, used as PagerDuty's `dedup_key`: `apitrace/<rule>/<start>`.
    public var id: String
    /// The rule.
    public var rule: String
    /// First firing evaluation (ms since 1970).
    public var started: Int64
    /// Latest firing evaluation.
    public var lastFiring: Int64
    /// First evaluation of the current recovery, nil while firing.
    public var recoveringSince: Int64?
    /// Last time a trigger was made for the notifiers (delivered or not); drives `repeat_interval`.
    public var lastTriggered: Int64?
    /// Triggers made for the notifiers (first page and repeats), delivered or not.
    public var triggers = 0
    /// When the latest trigger that a notifier accepted was made; nil while none was delivered.
    public var lastPaged: Int64?
    /// Triggers that at least one notifier accepted.
    public var pages = 0
    /// Firing evaluations that a mute kept from paging.
    public var mutedEvaluations = 0
    /// When it resolved, for closed incidents.
    public var resolved: Int64?
    /// The latest trigger summary.
    public var summary: String?

    /// Creates an incident starting at `now`.
    public init(rule: String, started: Int64) {
        self.rule = rule
        self.started = started
        self.lastFiring = started
        let name = TraceTimestampText.basic(started)
        self.id = String("apitrace/\(rule)/\(name)".prefix(255))
    }
}

extension Incident {
    private enum CodingKeys: String, CodingKey {
        case id, rule, started, lastFiring, recoveringSince, lastTriggered, triggers, lastPaged, pages, mutedEvaluations, resolved, summary
    }

    /// Reads an incident, also from state files written before `last_triggered` and `triggers` existed.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        rule = try c.decode(String.self, forKey: .rule)
        started = try c.decode(Int64.self, forKey: .started)
        lastFiring = try c.decode(Int64.self, forKey: .lastFiring)
        recoveringSince = try c.decodeIfPresent(Int64.self, forKey: .recoveringSince)
        lastPaged = try c.decodeIfPresent(Int64.self, forKey: .lastPaged)
        pages = try c.decodeIfPresent(Int.self, forKey: .pages) ?? 0
        // Older files marked an incident paged before delivery: that mark was the trigger.
        lastTriggered = try c.decodeIfPresent(Int64.self, forKey: .lastTriggered) ?? lastPaged
        triggers = try c.decodeIfPresent(Int.self, forKey: .triggers) ?? pages
        mutedEvaluations = try c.decodeIfPresent(Int.self, forKey: .mutedEvaluations) ?? 0
        resolved = try c.decodeIfPresent(Int64.self, forKey: .resolved)
        summary = try c.decodeIfPresent(String.self, forKey: .summary)
    }
}

/// A time-bounded silence, as Alertmanager has them: for one rule or all, with who and why.
public struct Mute: Sendable, Equatable, Codable {
    /// Short id to unmute by.
    public var id: String
    /// The muted rule; nil mutes every rule.
    public var rule: String?
    /// When it was created (ms since 1970).
    public var created: Int64
    /// When it ends.
    public var until: Int64
    /// Who created it (`$USER`).
    public var createdBy: String?
    /// Why.
    public var comment: String?

    /// Creates a mute.
    public init(id: String, rule: String?, created: Int64, until: Int64, createdBy: String?, comment: String?) {
        self.id = id
        self.rule = rule
        self.created = created
        self.until = until
        self.createdBy = createdBy
        self.comment = comment
    }
}

/// A notification not delivered yet: being delivered by a run (``claimedUntil`` in the future), or
/// failed and waiting for the next run.
public struct PendingDelivery: Sendable, Equatable, Codable {
    /// Identifies this delivery between a run's evaluation and its record of the outcome.
    public var id: String?
    /// Notifier name from the rules file.
    public var notifier: String
    /// What to send (no secrets: they are read from the environment at send time).
    public var notification: AlertNotification
    /// Attempts so far, over all runs.
    public var attempts: Int
    /// The last failure, redacted.
    public var lastError: String
    /// While a run delivers it outside the lock: until when (wall clock, ms since 1970) other runs
    /// leave it alone. A run that died mid-delivery leaves a claim that simply expires.
    public var claimedUntil: Int64?

    /// Creates a pending delivery.
    public init(id: String? = nil, notifier: String, notification: AlertNotification, attempts: Int, lastError: String, claimedUntil: Int64? = nil) {
        self.id = id
        self.notifier = notifier
        self.notification = notification
        self.attempts = attempts
        self.lastError = lastError
        self.claimedUntil = claimedUntil
    }

    /// Whether another run is delivering it at wall-clock time `now`.
    public func isClaimed(at now: Int64) -> Bool { (claimedUntil ?? .min) > now }
}

enum TraceTimestampText {
    static func basic(_ ms: Int64) -> String { TraceTimestamp(millisecondsSince1970: ms).basicISO8601 }
    static func rfc(_ ms: Int64) -> String { TraceTimestamp(millisecondsSince1970: ms).rfc3339 }
}
