/// A length of time in a rules file or the state, written `30s`, `5m`, `1h`, `2d` or combined `1h30m`.
///
/// ```swift
/// AlertDuration(parsing: "1h30m")?.milliseconds  // 5_400_000
/// AlertDuration.minutes(5).description           // "5m"
/// ```
public struct AlertDuration: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The length in milliseconds.
    public var milliseconds: Int64

    /// Creates a duration from milliseconds.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// A duration of whole seconds.
    public static func seconds(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 1000) }
    /// A duration of whole minutes.
    public static func minutes(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 60_000) }
    /// A duration of whole hours.
    public static func hours(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 3_600_000) }
    /// A duration of whole days.
    public static func days(_ n: Int64) -> AlertDuration { .init(milliseconds: n * 86_400_000) }

    /// Parses `90s`, `5m`, `1h`, `2d`, `1w`, combinations such as `1h30m`, or a bare number of seconds.
    public init?(parsing text: String) {
        let text = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { return nil }
        if let seconds = Int64(text), seconds >= 0 { self.milliseconds = seconds * 1000; return }
        var total: Int64 = 0
        var number: Int64? = nil
        for c in text {
            if let d = c.wholeNumberValue, c.isASCII {
                number = (number ?? 0) * 10 + Int64(d)
                guard number! < 1_000_000_000 else { return nil }
                continue
            }
            guard let n = number else { return nil }
            let unit: Int64
            switch c {
            case "s": unit = 1000
            case "m": unit = 60_000
            case "h": unit = 3_600_000
            case "d": unit = 86_400_000
            case "w": unit = 7 * 86_400_000
            default: return nil
            }
            total += n * unit
            number = nil
        }
        guard number == nil else { return nil }
        self.milliseconds = total
    }

    /// The shortest text that parses back to this duration, e.g. `1h30m`, `5m`, `45s`.
    public var description: String {
        var rest = milliseconds / 1000
        if rest == 0 { return milliseconds == 0 ? "0s" : "\(milliseconds)ms" }
        var text = ""
        for (unit, letter) in [(Int64(86_400), "d"), (3600, "h"), (60, "m"), (1, "s")] where rest >= unit {
            text += "\(rest / unit)\(letter)"
            rest %= unit
        }
        return text
    }

    public static func < (lhs: AlertDuration, rhs: AlertDuration) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = AlertDuration(parsing: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a duration: \(text)")
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

import Foundation
