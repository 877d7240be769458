import APITraceFormat
/// Aligned columns for the text format: widths from the plain text, colour added after padding.
struct TextTable {
    enum Alignment { case left, right }

    var headers: [String]
    var alignments: [Alignment]
    var rows: [[String]] = []
    /// Optional ANSI style per row (applied to the whole row after padding).
    var rowStyles: [String?] = []

    init(_ columns: [(String, Alignment)]) {
        headers = columns.map(\.0)
        alignments = columns.map(\.1)
    }

    /// Adds a row; cells are escaped for the terminal (text from trace files may hold escape sequences).
    mutating func add(_ row: [String], style: String? = nil) {
        rows.append(row.map(TextEscaping.terminal))
        rowStyles.append(style)
    }

    func render(indent: String = "  ", colors: Bool) -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (i, cell) in cells.enumerated() where i < widths.count {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                let isLast = i == cells.count - 1
                parts.append(alignments[i] == .right ? pad + cell : (isLast ? cell : cell + pad))
            }
            var text = indent + parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var out = ANSI.style(line(headers), ANSI.dim, colors) + "\n"
        for (row, style) in zip(rows, rowStyles) {
            let text = line(row)
            out += (style.map { ANSI.style(text, $0, colors) } ?? text) + "\n"
        }
        return out
    }
}

/// The few ANSI styles the text format uses.
enum ANSI {
    static let bold = "\u{1B}[1m"
    static let dim = "\u{1B}[2m"
    static let red = "\u{1B}[31m"
    static let yellow = "\u{1B}[33m"
    static let green = "\u{1B}[32m"
    static let reset = "\u{1B}[0m"

    static func style(_ text: String, _ code: String, _ enabled: Bool) -> String {
        enabled ? code + text + reset : text
    }
}
