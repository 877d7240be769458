/// One group of a rule with `group_by`: the values its traffic has for the rule's group keys,
/// e.g. the route `/profile`, or every group beyond the rule's `max_groups` counted together.
///
/// A grouped rule is evaluated for each group on its own, and each group is its own incident:
/// its own page, dedup key, repeat, resolve and mute (`apitrace mute --rule api-errors --group route=/profile`).
///
/// ```swift
/// let group = AlertGroup(keys: [.route], values: ["/profile"])
/// group.label        // "route=/profile": the state's and `mute --group`'s spelling
/// group.description  // "/profile": what a page names first
/// ```
package struct AlertGroup: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A field a rule can group by; the raw values are the rules file's spelling.
    package enum Key: String, Sendable, Hashable, Codable, CaseIterable {
        /// The route template (the collector's and exporter's `url_template` label).
        case route
        /// The server host (`server_address`).
        case host
        /// The app version from the trace files' headers (`app_version`).
        case appVersion = "app_version"

        /// The label the exporter and the collector's `/metrics` carry this field in.
        package var metricLabel: String {
            switch self {
            case .route: PrometheusMetricNames.route
            case .host: PrometheusMetricNames.host
            case .appVersion: PrometheusMetricNames.appVersion
            }
        }
    }

    /// The keys, in the canonical order (route, host, app version).
    package var keys: [Key]
    /// The value of each key; an event without the field has `-`.
    package var values: [String]
    /// True for the groups beyond the rule's `max_groups`, counted together.
    package var isOther: Bool

    /// Creates a group; keys are put in the canonical order.
    package init(keys: [Key], values: [String]) {
        let pairs = zip(keys, values).sorted { Key.allCases.firstIndex(of: $0.0)! < Key.allCases.firstIndex(of: $1.0)! }
        self.keys = pairs.map(\.0)
        self.values = pairs.map(\.1)
        isOther = false
    }

    /// The groups of a rule beyond its `max_groups`, counted together.
    package static func other(keys: [Key]) -> AlertGroup {
        var g = AlertGroup(keys: keys, values: [])
        g.isOther = true
        return g
    }

    /// `route=/profile host=api.example.com`, or `(other)`: how the state and `mute --group` name it.
    package var label: String {
        isOther ? Self.otherLabel : zip(keys, values).map { "\($0.rawValue)=\($1)" }.joined(separator: " ")
    }

    /// The label of the groups beyond `max_groups`.
    package static let otherLabel = "(other)"

    /// What a page names first: the route alone (`/profile`), other keys as `host=...`.
    package var description: String {
        if isOther { return "(other groups)" }
        return zip(keys, values).map { $0 == .route ? $1 : "\($0.rawValue)=\($1)" }.joined(separator: " ")
    }

    /// Parses `mute --group` arguments (`route=/profile`, one per key); nil with a message when one is not `key=value`.
    package static func parse(_ arguments: [String]) -> Result<AlertGroup, GroupArgumentError> {
        if arguments == [otherLabel] { return .success(.other(keys: [])) }
        var keys: [Key] = [], values: [String] = []
        for argument in arguments {
            guard let eq = argument.firstIndex(of: "="), let key = Key(rawValue: String(argument[..<eq])) else {
                return .failure(GroupArgumentError(message: "--group: expected key=value with key route, host or app_version (e.g. route=/profile); found \(argument)"))
            }
            guard !keys.contains(key) else { return .failure(GroupArgumentError(message: "--group: \(key.rawValue) is given twice")) }
            keys.append(key)
            values.append(String(argument[argument.index(after: eq)...]))
        }
        return .success(AlertGroup(keys: keys, values: values))
    }

    /// A `--group` argument that is not `key=value`.
    package struct GroupArgumentError: Error, Sendable, CustomStringConvertible {
        /// What is wrong.
        package var message: String
        package var description: String { message }
    }

    /// The counting key of an event's values (values joined by U+0001; U+0001 and U+0002 in a
    /// value become U+FFFD), so two groups never share a key nor take the `(other)` key.
    package static func countingKey(_ values: [String]) -> String {
        values.map { v in
            v.unicodeScalars.contains { $0.value == 1 || $0.value == 2 }
                ? String(String.UnicodeScalarView(v.unicodeScalars.map { $0.value == 1 || $0.value == 2 ? "\u{FFFD}" : $0 })) : v
        }.joined(separator: "\u{1}")
    }

    /// The group of a counting key made by ``countingKey(_:)`` for `keys` (in the rule's order).
    package init(keys: [Key], countingKey: String) {
        if countingKey == Self.otherCountingKey {
            self = .other(keys: keys)
        } else {
            self.init(keys: keys, values: countingKey.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init))
        }
    }

    /// The counting key of the groups beyond `max_groups` (a value never starts with U+0002).
    package static let otherCountingKey = "\u{2}other"
}
