import APITraceFormat

/// One incident: a rule firing, from its first firing evaluation until it stays recovered.
package struct Incident: Sendable, Equatable, Codable {
    /// Stable id, used as PagerDuty's `dedup_key`: `apitrace/<rule>/<start>`.
    package var id: String
    /// The rule.
    package var rule: String
    /// First firing evaluation (ms since 1970).
    package var started: Int64
    /// Latest firing evaluation.
    package var lastFiring: Int64
    /// First evaluation of the current recovery, nil while firing.
    package var recoveringSince: Int64?
    /// Last time a trigger was made for the notifiers (delivered or not); drives `repeat_interval`.
    package var lastTriggered: Int64?
    /// Triggers made for the notifiers (first page and repeats), delivered or not.
    package var triggers = 0
    /// When the latest trigger that a notifier accepted was made; nil while none was delivered.
    package var lastPaged: Int64?
    /// Triggers that at least one notifier accepted.
    package var pages = 0
    /// Firing evaluations that a mute kept from paging.
    package var mutedEvaluations = 0
    /// When it resolved, for closed incidents.
    package var resolved: Int64?
    /// The latest trigger summary.
    package var summary: String?
    /// The group of a grouped rule this incident is for (nil: the rule as a whole, or its summary).
    package var group: AlertGroup?

    /// Creates an incident starting at `now`.
    package init(rule: String, started: Int64) {
        self.rule = rule
        self.started = started
        self.lastFiring = started
        let name = TraceTimestamp(millisecondsSince1970: started).basicISO8601
        self.id = String("apitrace/\(rule)/\(name)".prefix(255))
    }

    /// Creates the incident of one group of a rule: its id (the `dedup_key`) holds the group's label,
    /// cut to 120 characters and followed by a hash of the whole label, so two groups never share a key.
    package init(rule: String, group: AlertGroup?, started: Int64) {
        self.init(rule: rule, started: started)
        guard let group else { return }
        self.group = group
        let label = group.label
        let name = TraceTimestamp(millisecondsSince1970: started).basicISO8601
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in label.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let tail = "#\(String(hash, radix: 16))/\(name)"
        // PagerDuty keeps 255 characters of a dedup_key: the label gives way, never the hash or the start.
        let room = max(0, min(120, 255 - "apitrace/\(rule)/".count - tail.count))
        let shown = String(label.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init).prefix(room))
        self.id = String("apitrace/\(rule)/\(shown)".prefix(255 - tail.count)) + tail
    }
}

extension Incident {
    private enum CodingKeys: String, CodingKey {
        case id, rule, started, lastFiring, recoveringSince, lastTriggered, triggers, lastPaged, pages, mutedEvaluations, resolved, summary, group
    }

    /// Reads an incident, also from state files written before `last_triggered` and `triggers` existed.
    package init(from decoder: any Decoder) throws {
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
        group = try c.decodeIfPresent(AlertGroup.self, forKey: .group)
    }
}
