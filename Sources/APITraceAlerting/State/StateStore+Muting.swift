package import APITraceFormat
import Foundation

extension StateStore {
    /// Adds a mute of `rule` (nil: every rule) for `duration` from `now`, under the state lock.
    ///
    /// ```swift
    /// let mute = try await StateStore(path: "state.json").mute(rule: "api-errors", for: .hours(2), comment: "deploy")
    /// ```
    package func mute(rule: String?, group: AlertGroup? = nil, for duration: AlertDuration, comment: String?, now: TraceTimestamp = .now(),
                     createdBy: String? = ProcessInfo.processInfo.environment["USER"]) async throws -> Mute {
        try await withLock { state in
            var mute = Mute(
                id: String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16), rule: rule,
                created: now.millisecondsSince1970, until: now.millisecondsSince1970 + duration.milliseconds,
                createdBy: createdBy, comment: comment)
            mute.group = group?.label
            state.pruneMutes(at: now.millisecondsSince1970)
            state.mutes.append(mute)
            return mute
        }
    }

    /// Ends mutes: the one with `id`, those of `rule`, or (both nil) every mute. Returns those removed.
    package func unmute(rule: String? = nil, id: String? = nil, now: TraceTimestamp = .now()) async throws -> [Mute] {
        try await withLock { state in
            state.pruneMutes(at: now.millisecondsSince1970)
            let removed = state.mutes.filter { m in
                if let id { return m.id == id }
                if let rule { return m.rule == rule }
                return true
            }
            state.mutes.removeAll { m in removed.contains(m) }
            return removed
        }
    }

    /// The mutes active at `now`.
    package func activeMutes(now: TraceTimestamp = .now()) throws -> [Mute] {
        try read().mutes.filter { $0.until > now.millisecondsSince1970 }
    }
}

extension Mute {
    /// One line for `apitrace mute --list`.
    package func line(now: TraceTimestamp) -> String {
        let left = AlertDuration(milliseconds: ((until - now.millisecondsSince1970) / 60_000 + 1) * 60_000)
        var text = "\(id)  \(rule ?? "(all rules)")\(group.map { " group \($0)" } ?? "")  until \(TraceTimestamp(millisecondsSince1970: until).rfc3339) (\(left) left)"
        if let createdBy { text += "  by \(createdBy)" }
        if let comment { text += "  \"\(comment)\"" }
        return text
    }
}
