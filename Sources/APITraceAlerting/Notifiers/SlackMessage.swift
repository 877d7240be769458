import APITraceFormat

/// A Slack incoming-webhook message: `text` (the notification fallback) and `blocks`.
///
/// Everything that comes from traces or the command line (routes, error identities, decode paths,
/// the summary, the report command) is escaped for mrkdwn (`&` `<` `>` as `&amp;` `&lt;` `&gt;`),
/// so a route such as `<!channel>` or `<https://evil|runbook>` shows as text instead of pinging the
/// channel or becoming a link; and each text stays under Slack's 3000-character block limit.
package struct SlackMessage: Sendable, Equatable, Encodable {
    /// Plain text shown in notifications and by clients without blocks.
    package var text: String
    /// Block Kit layout.
    package var blocks: [Block]

    /// A `section` or `context` block with mrkdwn text.
    package struct Block: Sendable, Equatable, Encodable {
        /// `section` or `context`.
        package var type: String
        /// For sections.
        package var text: Text?
        /// For context blocks.
        package var elements: [Text]?
    }

    /// A Block Kit text object.
    package struct Text: Sendable, Equatable, Encodable {
        /// `mrkdwn`.
        package var type = "mrkdwn"
        /// The text.
        package var text: String
    }

    /// Slack's limit on the text of a section block.
    package static let blockTextLimit = 3000

    /// Builds the message for a notification; `limits` bounds the evidence (``AlertEvidence/Limits/trimmed`` drops the top lists' tails).
    package init(_ n: AlertNotification, limits: AlertEvidence.Limits = .standard) {
        let marker: String
        switch n.action {
        case .trigger: marker = n.isRepeat ? ":rotating_light: still firing" : ":rotating_light: firing"
        case .resolve: marker = ":white_check_mark: resolved"
        }
        let summary = Self.escaped(n.summary)
        text = Self.fitted("[\(n.severity.rawValue.uppercased())] \(marker): \(summary)")
        var lines = ["*\(Self.escaped(n.rule))* \(marker) (\(n.severity.rawValue))", summary]
        let e = n.evidence?.limited(limits)
        if let e {
            if let extra = e.extraFailures {
                let percent = "\(Int((extra.share * 100).rounded()))%"
                lines.append("*\(extra.share >= 0.5 ? "Most" : "Largest share") of the extra failures:* \(percent) `\(Self.escaped(extra.row))` (vs \(Self.escaped(extra.baseline)))")
            }
            if !e.topFailingRoutes.isEmpty {
                lines.append("*Top failing routes:* " + e.topFailingRoutes.map { "`\(Self.escaped($0.route))` \(Int($0.failures))/\(Int($0.requests))" }.joined(separator: ", "))
            }
            if !e.topErrorIdentities.isEmpty {
                lines.append("*Top errors:* " + e.topErrorIdentities.map { "`\(Self.escaped($0.value))` \($0.count)" }.joined(separator: ", "))
            }
            if !e.topDecodeFailurePaths.isEmpty {
                lines.append("*Top decode failures:* " + e.topDecodeFailurePaths.map { "`\(Self.escaped($0.value))` \($0.count)" }.joined(separator: ", "))
            }
        }
        blocks = [Block(type: "section", text: Text(text: Self.fitted(lines.joined(separator: "\n"))))]
        var context = ["incident `\(Self.escaped(n.incidentID))`"]
        if let e { context.append("full report: `\(Self.escaped(e.reportCommand))`") }
        blocks.append(Block(type: "context", elements: context.map { Text(text: Self.fitted($0)) }))
    }

    /// `text` with the three characters Slack's mrkdwn treats as control characters escaped (and
    /// control characters as spaces): the format module's one Slack escaping, ``TextEscaping``.
    package static func escaped(_ text: String) -> String { TextEscaping.slack(text) }

    /// Escaped text cut to the block limit without splitting an `&amp;`-style entity.
    static func fitted(_ escaped: String, limit: Int = blockTextLimit) -> String {
        guard escaped.count > limit else { return escaped }
        var head = escaped.prefix(limit - 1)
        if let amp = head.suffix(5).lastIndex(of: "&"), !head[amp...].contains(";") { head = head[..<amp] }
        return String(head) + "…"
    }
}
