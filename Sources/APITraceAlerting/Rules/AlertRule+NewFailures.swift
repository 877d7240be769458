import APITraceFormat

extension AlertRule {
    /// A rule kind that pages once when a failure appears that its baseline has not seen — a
    /// decode-failure group (entity + kind + folded path) or a recorded error identity — or comes
    /// back in a newer app version after it had stopped (Crashlytics' "new" and "regressed" issues).
    ///
    /// ```yaml
    /// rules:
    ///   - name: new-failures
    ///     new_failures: {baseline: 7d, window: 1h, min_count: 5, min_sessions: 3, min_session_share: 0.001}
    ///     notify: [oncall]
    /// ```
    package struct NewFailureDetection: Sendable, Equatable, Codable {
        /// How far back a failure must not have been seen to be new; default 7 days.
        package var baseline: AlertDuration
        /// The recent window in which a new failure must show up; default 1 hour.
        package var window: AlertDuration
        /// Fewest events of the failure in the window; default 5.
        package var minCount: Int
        /// Fewest distinct sessions that met it in the window, so one device cannot page; default 3.
        package var minSessions: Int
        /// Smallest share of the window's sessions that met it; default 0.001 (0.1%).
        package var minSessionShare: Double
        /// A failure that stopped this long before the window and returns in a newer app version
        /// than any it was seen in is *regressed*; default 1 day.
        package var regressedAfter: AlertDuration

        /// Creates a detection with the documented defaults.
        package init(
            baseline: AlertDuration = .days(7), window: AlertDuration = .hours(1), minCount: Int = 5, minSessions: Int = 3,
            minSessionShare: Double = 0.001, regressedAfter: AlertDuration = .days(1)
        ) {
            self.baseline = baseline
            self.window = window
            self.minCount = minCount
            self.minSessions = minSessions
            self.minSessionShare = minSessionShare
            self.regressedAfter = regressedAfter
        }
    }
}

/// One failure a ``AlertRule/NewFailureDetection`` found new or regressed.
package struct NewFailure: Sendable, Equatable, Codable {
    /// `decode_failure` or `error`.
    package var kind: String
    /// The group: `App keyNotFound data.apps[*].stability`, or an error identity.
    package var group: String
    /// True when it had been seen before (in older app versions) and came back.
    package var regressed: Bool
    /// App versions it appeared with in the window, sorted.
    package var appVersions: [String]
    /// Its first event in the window (RFC 3339).
    package var firstSeen: String
    /// Events in the window.
    package var count: Int
    /// Distinct sessions that met it in the window.
    package var sessions: Int
    /// An example path (decode failures) and message.
    package var examplePath: String?
    package var exampleMessage: String?

    /// One line for a page: `new decode_failure App keyNotFound data.apps[*].stability in 2.4.0 (12 events, 5 sessions, first seen ...)`.
    package var line: String {
        "\(regressed ? "regressed" : "new") \(kind) \(group) in app \(appVersions.joined(separator: ", ")) (\(count) events, \(sessions) sessions, first seen \(firstSeen))"
    }
}
