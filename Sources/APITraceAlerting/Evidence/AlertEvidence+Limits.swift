/// Size limits on the evidence of a page: routes, error identities and decode paths come from
/// traces, so any of them can be arbitrarily long, and the services refuse large bodies
/// (PagerDuty: 512 KB per event, 1024 characters of summary; Slack: 3000 characters per block).
extension AlertEvidence {
    /// How much of the evidence a body carries.
    package struct Limits: Sendable, Equatable {
        /// Longest string taken from the traces (routes, identities, paths, scope, report command).
        package var stringLength: Int
        /// Longest top list.
        package var listLength: Int
        /// Whether the per-window numbers are kept.
        package var keepsWindows: Bool

        /// What every body carries first: strings up to 512 characters, the top 5 of each list, every window.
        package static let standard = Limits(stringLength: 512, listLength: 5, keepsWindows: true)
        /// The second try after a service refused the body as invalid or too large (HTTP 400 or 413):
        /// strings up to 120 characters, the top 3, no windows.
        package static let trimmed = Limits(stringLength: 120, listLength: 3, keepsWindows: false)
    }

    /// The evidence within `limits`; cut strings end in `…`.
    package func limited(_ limits: Limits) -> AlertEvidence {
        var e = self
        let n = limits.stringLength
        e.rule = Self.cut(rule, n)
        e.scope = Self.cut(scope, n)
        e.subject = subject.map { Self.cut($0, n) }
        e.group = group.map { Self.cut($0, n) }
        e.detection = Self.cut(detection, n)
        e.reportCommand = Self.cut(reportCommand, max(n, 200))
        e.topFailingRoutes = topFailingRoutes.prefix(limits.listLength).map { r in
            var r = r
            r.route = Self.cut(r.route, n)
            return r
        }
        e.topErrorIdentities = topErrorIdentities.prefix(limits.listLength).map { Count(value: Self.cut($0.value, n), count: $0.count) }
        e.extraFailures = extraFailures.map { x in
            var x = x
            x.row = Self.cut(x.row, n)
            x.line = ExtraFailures.line(share: x.share, row: x.row)
            return x
        }
        e.topDecodeFailurePaths = topDecodeFailurePaths.prefix(limits.listLength).map { Count(value: Self.cut($0.value, n), count: $0.count) }
        e.windows = limits.keepsWindows ? windows.map { w in
            var w = w
            w.detection = Self.cut(w.detection, n)
            w.heldBack = w.heldBack.map { Self.cut($0, n) }
            return w
        } : []
        return e
    }

    /// `text` cut to at most `limit` characters, the last one `…` when something was cut.
    package static func cut(_ text: String, _ limit: Int) -> String {
        guard limit > 0 else { return "" }
        guard text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}
