import APITraceFormat
import Foundation

/// A length of time in a rules file or the state, written `30s`, `5m`, `1h`, `2d`, combined `1h30m` or `1.5h`.
///
/// ```swift
/// AlertDuration(parsing: "1h30m")?.milliseconds  // 5_400_000
/// AlertDuration.minutes(5).description           // "5m"
/// ```
package struct AlertDuration: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The length in milliseconds.
    package var milliseconds: Int64

    /// Creates a duration from milliseconds.
    package init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// A duration of whole seconds.
    package static func seconds(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 1000) }
    /// A duration of whole minutes.
    package static func minutes(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 60_000) }
    /// A duration of whole hours.
    package static func hours(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 3_600_000) }
    /// A duration of whole days.
    package static func days(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 86_400_000) }

    /// Parses a duration in the one grammar of every command (``TimeGrammar``): `90s`, `5m`,
    /// `1h30m`, `1.5h`, `7d`, `500ms`, or a bare number of seconds.
    package init?(parsing text: String) {
        guard let ms = TimeGrammar.milliseconds(text) else { return nil }
        self.milliseconds = ms
    }

    /// The shortest text that parses back to this duration, e.g. `1h30m`, `5m`, `45s`.
    package var description: String {
        var rest = milliseconds / 1000
        let millis = milliseconds % 1000
        if rest == 0 { return milliseconds == 0 ? "0s" : "\(milliseconds)ms" }
        var text = ""
        for (unit, letter) in [(Int64(86_400), "d"), (3600, "h"), (60, "m"), (1, "s")] where rest >= unit {
            text += "\(rest / unit)\(letter)"
            rest %= unit
        }
        return millis == 0 ? text : text + "\(millis)ms"
    }

    package static func < (lhs: AlertDuration, rhs: AlertDuration) -> Bool { lhs.milliseconds < rhs.milliseconds }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = AlertDuration(parsing: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a duration: \(text)")
        }
        self = parsed
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
