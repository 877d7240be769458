import APITraceFormat
import Foundation

/// A parsed rules file: the rules and the notifiers they page.
///
/// ```swift
/// let rules = try AlertRules.load(path: "alert-rules.yaml")
/// for rule in rules.rules { print(rule.name, rule.slo ?? 0) }
/// ```
///
/// The file is YAML (JSON, being YAML, is accepted too). See `Docs/alerting.md` for every field.
package struct AlertRules: Sendable, Equatable {
    /// The rules, in file order.
    package var rules: [AlertRule]
    /// The notifiers by name.
    package var notifiers: [String: NotifierConfiguration]
    /// The file it was read from, for messages.
    package var path: String?

    /// Creates a rule set.
    package init(rules: [AlertRule], notifiers: [String: NotifierConfiguration], path: String? = nil) {
        self.rules = rules
        self.notifiers = notifiers
        self.path = path
    }

    /// Reads and validates a rules file.
    package static func load(path: String) throws(AlertConfigError) -> AlertRules {
        let data: Data
        switch RegularFile.read(path, limit: maximumFileBytes) {
        case .success(let bytes?): data = Data(bytes)
        case .success(nil): throw AlertConfigError(file: path, line: nil, message: "cannot read the rules file: no such file")
        case .failure(let refusal): throw AlertConfigError(file: path, line: nil, message: "cannot read the rules file: \(refusal.reason)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw AlertConfigError(file: path, line: nil, message: "the rules file is not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// The largest rules file read (a real one is a few kilobytes).
    package static let maximumFileBytes = 4 << 20

    /// Environment variables the notifiers need that are not set (names only, never values).
    package func missingSecrets(in environment: [String: String]) -> [(notifier: String, variable: String)] {
        notifiers.values.sorted { $0.name < $1.name }.flatMap { n in
            [n.routingKeyEnvironmentVariable, n.urlEnvironmentVariable].compactMap { $0 }
                .filter { (environment[$0] ?? "").isEmpty }.map { (n.name, $0) }
        }
    }
}

/// A problem in a rules file, naming the file, the line and the field.
///
/// ```text
/// alert-rules.yaml:7:5: rules[0].slo: must be between 0 and 1 (exclusive), e.g. 0.99; found 99
/// ```
package struct AlertConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rules file.
    package var file: String
    /// 1-based line, when known.
    package var line: Int?
    /// 1-based column, when known.
    package var column: Int?
    /// Path of the field, e.g. `rules[0].slo`.
    package var field: String?
    /// What is wrong and what to write instead.
    package var message: String

    /// Creates an error.
    package init(file: String, line: Int?, column: Int? = nil, field: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    package var description: String {
        var text = file
        if let line { text += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        text += ": "
        if let field { text += "\(field): " }
        return text + message
    }
}
