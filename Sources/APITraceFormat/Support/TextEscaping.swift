/// Escaping of text that came from trace files, for each place it is shown, scalar by scalar
/// (`"\r\n"` is one `Character` but two scalars; combining marks attach to the character before).
/// A route, identity, message or reason is whatever a producer wrote: it must never close a tag,
/// break a table or a scrape, ping a channel or move a terminal's cursor.
package enum TextEscaping {
    /// True for scalars a terminal or a line-based format acts on: C0, DEL, C1, and the Unicode
    /// line and paragraph separators.
    @inline(__always)
    package static func isControl(_ c: Unicode.Scalar) -> Bool {
        c.value < 0x20 || (0x7F...0x9F).contains(c.value) || c.value == 0x2028 || c.value == 0x2029
    }

    /// Text for a terminal: control characters (escape sequences included) shown as `\u{1B}`.
    package static func terminal(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            if isControl(c) {
                out.append(contentsOf: "\\u{\(String(c.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(c)
            }
        }
        return String(out)
    }

    /// An OpenMetrics label value: backslash, double quote and line feed escaped, scalar by scalar
    /// (`"\r\n"` is one `Character` but two scalars); other control characters, which the format
    /// cannot escape and which break scrapers, become U+FFFD.
    package static func openMetricsLabel(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        for c in value.unicodeScalars {
            switch c {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case _ where isControl(c): out.append("\u{FFFD}")
            default: out.append(c)
            }
        }
        return String(out)
    }

    /// Text inside HTML elements or quoted attributes.
    package static func html(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            switch c {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            case _ where isControl(c) && c != "\n" && c != "\t": out.append("\u{FFFD}")
            default: out.append(c)
            }
        }
        return String(out)
    }

    /// Text in a Markdown table cell: everything Markdown or HTML would act on is backslash-escaped
    /// or entity-encoded, and line breaks become spaces, so a cell stays one cell of plain text.
    package static func markdownCell(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            switch c {
            case "\\", "|", "`", "*", "_", "[", "]", "~":
                out.append("\\")
                out.append(c)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "\n", "\r", "\t", "\u{2028}", "\u{2029}": out.append(" ")
            case _ where isControl(c): out.append("\u{FFFD}")
            default: out.append(c)
            }
        }
        return String(out)
    }

    /// Text as a Markdown code span inside a table cell: fenced with more backticks than it holds,
    /// `|` escaped (GitHub tables split on it even in code), line breaks and controls as spaces.
    package static func markdownCode(_ s: String) -> String {
        var body = String.UnicodeScalarView()
        var run = 0, longest = 0
        for c in s.unicodeScalars {
            run = c == "`" ? run + 1 : 0
            longest = max(longest, run)
            switch c {
            case "|": body.append(contentsOf: "\\|".unicodeScalars)
            case _ where isControl(c): body.append(" ")
            default: body.append(c)
            }
        }
        let fence = String(repeating: "`", count: longest + 1)
        let text = String(body)
        let pad = text.hasPrefix("`") || text.hasSuffix("`") ? " " : ""
        return fence + pad + text + pad + fence
    }

    /// Text in Slack `mrkdwn`: `&`, `<` and `>` encoded as Slack asks, so `<!channel>` or
    /// `<https://evil|runbook>` from a route stays text; control characters become spaces.
    package static func slack(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            switch c {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case _ where isControl(c) && c != "\n": out.append(" ")
            default: out.append(c)
            }
        }
        return String(out)
    }
}
