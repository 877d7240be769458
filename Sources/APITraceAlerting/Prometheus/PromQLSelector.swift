/// One PromQL series selector, `metric{label="value",label=~"regex"}`, built from apitrace's
/// scopes, status ranges and error globs.
package struct PromQLSelector: Sendable, Equatable {
    /// The metric name.
    package var metric: String
    /// Rendered label matchers, e.g. `url_template="/apps/{id}"`.
    package var matchers: [String] = []

    package init(_ metric: String, _ matchers: [String] = []) {
        self.metric = metric
        self.matchers = matchers
    }

    /// The selector as PromQL.
    package var text: String { matchers.isEmpty ? metric : "\(metric){\(matchers.joined(separator: ","))}" }

    /// `sum(increase(selector[window]))`, with an `offset` when given; `or vector(0)` so a
    /// family without series yet adds 0 instead of emptying a sum.
    package func increase(_ window: String, offset: String? = nil) -> String {
        "(sum(increase(\(text)[\(window)]\(offset.map { " offset \($0)" } ?? ""))) or vector(0))"
    }

    /// `label="value"`.
    package static func equal(_ label: String, _ value: String) -> String { "\(label)=\(quote(value))" }
    /// `label=~"regex"`.
    package static func matching(_ label: String, _ regex: String) -> String { "\(label)=~\(quote(regex))" }
    /// `label!~"regex"`.
    package static func notMatching(_ label: String, _ regex: String) -> String { "\(label)!~\(quote(regex))" }

    /// A PromQL string literal (Go escaping of backslash, quote and line breaks).
    package static func quote(_ value: String) -> String {
        var out = "\""
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// A regular expression (RE2, anchored by Prometheus) matching exactly `text`.
    package static func literalRegex(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            if "\\.+*?()|[]{}^$".unicodeScalars.contains(c) { out += "\\" }
            out.unicodeScalars.append(c)
        }
        return out
    }

    /// The regex of one of apitrace's globs (``TextPattern``): `*` is any run of characters.
    package static func globRegex(_ glob: String) -> String {
        glob.split(separator: "*", omittingEmptySubsequences: false).map { literalRegex(String($0)) }.joined(separator: ".*")
    }

    /// The matcher of a scope field in the one filter grammar (`TextPattern`): equality without a
    /// `*`, else the glob's regex, wherever the `*` stands (`/apps/*/reviews`, `*.example.com`).
    package static func pattern(_ label: String, _ pattern: String) -> String {
        pattern.contains("*") ? matching(label, globRegex(pattern)) : equal(label, pattern)
    }

    /// The regex of a label holding one of the globs, or `nil` for none.
    package static func globsRegex(_ globs: [String]) -> String? {
        globs.isEmpty ? nil : globs.map(globRegex).joined(separator: "|")
    }

    /// A regex matching the decimal status codes in `ranges` (`500...599` is `5[0-9][0-9]`),
    /// whole hundreds and tens folded into character classes.
    package static func statusRegex(_ ranges: [ClosedRange<Int>]) -> String {
        var parts: [String] = []
        for range in ranges {
            var code = max(100, range.lowerBound)
            let last = min(999, range.upperBound)
            while code <= last {
                if code % 100 == 0, code >= 100, code + 99 <= last {
                    parts.append("\(code / 100)[0-9][0-9]")
                    code += 100
                } else if code % 10 == 0, code >= 10, code + 9 <= last {
                    parts.append("\(code / 10)[0-9]")
                    code += 10
                } else {
                    parts.append(String(code))
                    code += 1
                }
            }
        }
        return parts.joined(separator: "|")
    }
}
