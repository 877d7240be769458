extension TraceReport {
    func renderJSON() -> String { "" }
    func renderMarkdown() -> String { "" }
    func renderHTML() -> String { "" }
}
