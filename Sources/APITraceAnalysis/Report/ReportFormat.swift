/// The output formats of a report.
public enum ReportFormat: String, Sendable, CaseIterable {
    /// Aligned plain text for a terminal (colour optional).
    case text
    /// A stable JSON document for scripts; see `Docs/report.md` for the schema.
    case json
    /// GitHub-flavoured Markdown tables.
    case markdown
    /// One self-contained HTML page with inline SVG charts.
    case html
}

extension TraceReport {
    /// Renders the report. `colors` applies to ``ReportFormat/text`` only.
    public func render(_ format: ReportFormat, colors: Bool = false) -> String {
        switch format {
        case .text: renderText(colors: colors)
        case .json: renderJSON()
        case .markdown: renderMarkdown()
        case .html: renderHTML()
        }
    }
}
