import APITraceFormat
import Foundation

extension TraceReport {
    /// The "compared with baseline" section (`apitrace report --baseline ...`): what changed
    /// between a baseline and a window, ranked by share of the excess failures (``FailureComparison``).
    public struct Comparison: Sendable, Equatable {
        /// How the window was chosen (``ComparisonWindows/windowDescription``).
        public var window: String
        /// How the baseline was chosen.
        public var baseline: String
        /// The ranking.
        public var result: FailureComparison

        /// Creates the section.
        public init(window: String, baseline: String, result: FailureComparison) {
            self.window = window
            self.baseline = baseline
            self.result = result
        }
    }

    /// The definition every format prints above the comparison.
    public static let comparisonDefinition = """
        Excess failures of a row: its window failures minus what the baseline predicts (its window requests \
        times its baseline failure rate; for error identity, decode path and outcome class, all window requests \
        times the row's baseline failures per baseline request), floored at 0. A share is a row's excess over \
        the sum of excesses in its dimension. Failures here are errors (5xx, transport) and decode failures; \
        4xx, cancelled and offline requests never fail. Rows absent from the baseline take their route's rate \
        (app version on route) or the whole baseline's.
        """

    /// Most characters of a row's label shown in text and HTML tables.
    static let comparisonLabelWidth = 80

    // MARK: - Text

    func comparisonText(colors: Bool) -> String {
        guard let comparison else { return "" }
        typealias F = ReportNumberFormatting
        let r = comparison.result, T = TextEscaping.terminal
        var out = "\n" + ANSI.style("COMPARED WITH BASELINE", ANSI.bold, colors) + "\n"
        out += "  window:   \(T(comparison.window)): \(Self.sideSummary(r.window))\n"
        out += "  baseline: \(T(comparison.baseline)): \(Self.sideSummary(r.baseline))\n"
        for line in Self.wrapped(Self.comparisonDefinition, width: 100) { out += ANSI.style("  \(line)", ANSI.dim, colors) + "\n" }
        if !r.baselineHasTraffic { out += "  the baseline holds no requests: every failure of the window counts as extra\n" }
        out += "  extra failures: \(F.estimate(r.excessFailures))\n"
        guard let headline = r.headline else {
            out += "  no row has more failures than its baseline predicts\n"
            return out
        }
        out += ANSI.style("  \(T(Self.clip(headline.sentence, 200)))", ANSI.bold, colors) + "\n"
        var table = TextTable([
            ("DIMENSION", .left), ("ROW", .left), ("SHARE", .right), ("EXTRA", .right), ("FAILURES", .right),
            ("REQUESTS", .right), ("RATE", .right), ("BASELINE", .right),
        ])
        for ranking in r.rankings where !ranking.rows.isEmpty {
            for (i, row) in ranking.rows.enumerated() {
                table.add([
                    i == 0 ? ranking.dimension.rawValue : "", Self.clip(row.label, Self.comparisonLabelWidth), F.wholePercent(row.share),
                    F.estimate(row.excessFailures), F.estimate(row.window.failures),
                    row.dimension.splitsRequests ? F.estimate(row.window.requests) : "-",
                    F.percent(row.windowRate), Self.baselineCell(row),
                ])
            }
            if ranking.rowsOmitted > 0 { table.add(["", "... \(ranking.rowsOmitted) more", "", "", "", "", "", ""]) }
        }
        return out + table.render(colors: colors)
    }

    /// `text` in lines of at most `width` characters, broken at spaces.
    static func wrapped(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width { lines.append(line); line = "" }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    static func sideSummary(_ t: FailureComparisonCounts.Tally) -> String {
        typealias F = ReportNumberFormatting
        let rate = t.requests > 0 ? t.failures / t.requests : 0
        return "\(F.estimate(t.requests)) requests, \(F.estimate(t.failures)) failures (\(F.percent(rate)))"
    }

    static func baselineCell(_ row: FailureComparison.Row) -> String {
        let rate = ReportNumberFormatting.percent(row.baselineRate)
        switch row.expectation {
        case .row: return rate
        case .route: return "\(rate) (route)"
        case .overall: return "\(rate) (all)"
        case .none: return "-"
        }
    }

    // MARK: - JSON

    func comparisonJSON() -> ReportJSONValue? {
        guard let comparison else { return nil }
        typealias J = ReportJSONValue
        let r = comparison.result
        func side(_ description: String, _ t: FailureComparisonCounts.Tally) -> J {
            .object([
                ("selection", .string(description)), ("requests", .double(t.requests)), ("failures", .double(t.failures)),
                ("failure_rate", .double(t.requests > 0 ? t.failures / t.requests : 0)),
            ])
        }
        func row(_ row: FailureComparison.Row) -> J {
            .object([
                ("dimension", .string(row.dimension.rawValue)), ("value", .string(row.value)), ("route", .optional(row.route)),
                ("label", .string(row.label)),
                ("window_requests", .double(row.window.requests)), ("window_failures", .double(row.window.failures)),
                ("baseline_requests", .double(row.baseline.requests)), ("baseline_failures", .double(row.baseline.failures)),
                ("window_rate", .double(row.windowRate)), ("baseline_rate", .double(row.baselineRate)),
                ("expectation", .string(row.expectation.rawValue)), ("expected_failures", .double(row.expectedFailures)),
                ("excess_failures", .double(row.excessFailures)), ("share", .double(row.share)),
            ])
        }
        return .object([
            ("definition", .string(Self.comparisonDefinition)),
            ("window", side(comparison.window, r.window)),
            ("baseline", side(comparison.baseline, r.baseline)),
            ("baseline_has_traffic", .bool(r.baselineHasTraffic)),
            ("excess_failures", .double(r.excessFailures)),
            ("headline", r.headline.map { .object([("sentence", .string($0.sentence)), ("row", row($0))]) } ?? .null),
            ("dimensions", .array(r.rankings.map { ranking in
                .object([
                    ("dimension", .string(ranking.dimension.rawValue)), ("total_excess", .double(ranking.totalExcess)),
                    ("rows_omitted", .int(ranking.rowsOmitted)), ("rows", .array(ranking.rows.map(row))),
                ])
            })),
        ])
    }

    // MARK: - Markdown

    func comparisonMarkdown() -> String {
        guard let comparison else { return "" }
        typealias F = ReportNumberFormatting
        let r = comparison.result, text = TextEscaping.markdownCell, c = TextEscaping.markdownCode
        var out = "\n## Compared with baseline\n\n"
        out += "- window: \(text(comparison.window)): \(Self.sideSummary(r.window))\n"
        out += "- baseline: \(text(comparison.baseline)): \(Self.sideSummary(r.baseline))\n"
        out += "- extra failures: \(F.estimate(r.excessFailures))\n\n"
        out += "\(Self.comparisonDefinition)\n\n"
        if !r.baselineHasTraffic { out += "The baseline holds no requests: every failure of the window counts as extra.\n\n" }
        guard let headline = r.headline else { return out + "No row has more failures than its baseline predicts.\n" }
        out += "**\(F.wholePercent(headline.share)) of the extra failures:** \(c(headline.label))\n\n"
        out += "| dimension | row | share | extra | failures | requests | rate | baseline |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        for ranking in r.rankings where !ranking.rows.isEmpty {
            for row in ranking.rows {
                out += "| \(ranking.dimension.rawValue) | \(c(row.label)) | \(F.wholePercent(row.share)) | \(F.estimate(row.excessFailures)) | "
                    + "\(F.estimate(row.window.failures)) | \(row.dimension.splitsRequests ? F.estimate(row.window.requests) : "-") | "
                    + "\(F.percent(row.windowRate)) | \(Self.baselineCell(row)) |\n"
            }
            if ranking.rowsOmitted > 0 { out += "| \(ranking.dimension.rawValue) | ... \(ranking.rowsOmitted) more | | | | | | |\n" }
        }
        return out
    }

    // MARK: - HTML

    func comparisonHTML() -> String {
        guard let comparison else { return "" }
        typealias F = ReportNumberFormatting
        let r = comparison.result, h = Self.escapeHTML
        var out = "<h2 id=\"compare\">Compared with baseline</h2>\n"
        out += "<ul><li>window: \(h(comparison.window)): \(Self.sideSummary(r.window))</li>"
        out += "<li>baseline: \(h(comparison.baseline)): \(Self.sideSummary(r.baseline))</li>"
        out += "<li>extra failures: \(F.estimate(r.excessFailures))</li></ul>\n"
        out += "<p class=\"muted\">\(h(Self.comparisonDefinition))</p>\n"
        if !r.baselineHasTraffic { out += "<p>The baseline holds no requests: every failure of the window counts as extra.</p>\n" }
        guard let headline = r.headline else { return out + "<p>No row has more failures than its baseline predicts.</p>\n" }
        out += "<p class=\"headline\"><strong>\(F.wholePercent(headline.share)) of the extra failures:</strong> <code>\(h(Self.clip(headline.label, 200)))</code></p>\n"
        out += comparisonChart(r)
        out += "<table><thead><tr><th>dimension</th><th>row</th><th class=\"num\">share</th><th class=\"num\">extra</th><th class=\"num\">failures</th>"
        out += "<th class=\"num\">requests</th><th class=\"num\">rate</th><th class=\"num\">baseline</th></tr></thead><tbody>\n"
        for ranking in r.rankings where !ranking.rows.isEmpty {
            for (i, row) in ranking.rows.enumerated() {
                out += "<tr\(row.share >= 0.5 ? " class=\"bad\"" : "")><td>\(i == 0 ? h(ranking.dimension.title) : "")</td>"
                out += "<td><code>\(h(Self.clip(row.label, Self.comparisonLabelWidth)))</code></td><td class=\"num\">\(F.wholePercent(row.share))</td>"
                out += "<td class=\"num\">\(F.estimate(row.excessFailures))</td><td class=\"num\">\(F.estimate(row.window.failures))</td>"
                out += "<td class=\"num\">\(row.dimension.splitsRequests ? F.estimate(row.window.requests) : "-")</td>"
                out += "<td class=\"num\">\(F.percent(row.windowRate))</td><td class=\"num\">\(h(Self.baselineCell(row)))</td></tr>\n"
            }
            if ranking.rowsOmitted > 0 { out += "<tr><td></td><td class=\"muted\">... \(ranking.rowsOmitted) more</td><td></td><td></td><td></td><td></td><td></td><td></td></tr>\n" }
        }
        return out + "</tbody></table>\n"
    }

    /// The top rows of route, app version and app version on route as bars of their share.
    private func comparisonChart(_ r: FailureComparison) -> String {
        let rows = [FailureComparison.Dimension.appVersionRoute, .route, .appVersion].flatMap { r.ranking($0).rows.prefix(3) }
        guard !rows.isEmpty else { return "" }
        let width = 1000.0, label = 360.0, rowH = 24.0
        let height = Double(rows.count) * rowH + 10
        let plotW = width - label - 70
        var svg = "<svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"Share of the extra failures\" class=\"compare-chart\">\n"
        for (i, row) in rows.enumerated() {
            let y = 5 + Double(i) * rowH
            let text = Self.escapeHTML(Self.clip("\(row.dimension.title): \(row.label)", 60))
            svg += "<text x=\"\(String(format: "%.1f", label - 8))\" y=\"\(String(format: "%.1f", y + 15))\" font-size=\"12\" text-anchor=\"end\">\(text)</text>\n"
            let w = max(1, row.share * plotW)
            svg += "<rect x=\"\(String(format: "%.1f", label))\" y=\"\(String(format: "%.1f", y + 4))\" width=\"\(String(format: "%.1f", w))\" height=\"14\" fill=\"#d70015\"><title>\(text): \(ReportNumberFormatting.wholePercent(row.share))</title></rect>\n"
            svg += "<text x=\"\(String(format: "%.1f", label + w + 6))\" y=\"\(String(format: "%.1f", y + 15))\" font-size=\"11\" fill=\"#666\">\(ReportNumberFormatting.wholePercent(row.share))</text>\n"
        }
        return svg + "</svg>\n"
    }
}
