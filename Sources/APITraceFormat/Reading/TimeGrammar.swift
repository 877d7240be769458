import Foundation

/// The one grammar of times and durations for every option of every command (`--since`,
/// `--until`, `--now`, `--step`, `--for`, rule durations):
///
/// - a **duration** is one or more `<number><unit>` parts, the number whole or decimal, the unit
///   `ms`, `s`, `m`, `h`, `d` or `w` (`90s`, `1h30m`, `1.5h`, `7d`, `500ms`), or a bare number of
///   seconds; at most 100 years;
/// - an **instant** is RFC 3339 (`2026-11-22T10:00:00Z`), `now`, or a duration back from now.
///
/// ```swift
/// TimeGrammar.milliseconds("1h30m")   // 5_400_000
/// TimeGrammar.milliseconds("1.5h")    // 5_400_000
/// ```
public enum TimeGrammar {
    /// The longest duration accepted: 100 years.
    public static let maximumMilliseconds: Int64 = 100 * 365 * 86_400_000

    /// Milliseconds in a duration, or nil when the text is not one.
    public static func milliseconds(_ text: String) -> Int64? {
        let t = Array(text.trimmingCharacters(in: .whitespaces).lowercased().utf8)
        guard !t.isEmpty else { return nil }
        var i = 0
        var total = 0.0
        var parts = 0
        while i < t.count {
            let start = i
            while i < t.count, (t[i] >= 48 && t[i] <= 57) || t[i] == UInt8(ascii: ".") { i += 1 }
            guard i > start, let number = Double(String(decoding: t[start..<i], as: UTF8.self)), number.isFinite else { return nil }
            let unitStart = i
            while i < t.count, t[i] >= 97, t[i] <= 122 { i += 1 }
            let factor: Double
            switch String(decoding: t[unitStart..<i], as: UTF8.self) {
            case "ms": factor = 1
            case "s": factor = 1000
            case "m": factor = 60_000
            case "h": factor = 3_600_000
            case "d": factor = 86_400_000
            case "w": factor = 604_800_000
            case "" where parts == 0 && i == t.count: factor = 1000
            default: return nil
            }
            total += number * factor
            parts += 1
            guard total <= Double(maximumMilliseconds) else { return nil }
        }
        return Int64(total.rounded())
    }

    /// An instant: RFC 3339, `now`, or a duration back from `now`.
    public static func instant(_ text: String, now: TraceTimestamp) -> TraceTimestamp? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased() == "now" { return now }
        if let t = TraceTimestamp(rfc3339: trimmed) { return t }
        if let ms = milliseconds(trimmed) { return now.adding(milliseconds: -ms) }
        return nil
    }

    /// What the grammar accepts, for error messages.
    public static let instantHelp = "an RFC 3339 time (2026-11-22T10:00:00Z), now, or a duration back from now (90s, 30m, 1h30m, 1.5h, 7d)"
    /// What the grammar accepts as a duration, for error messages.
    public static let durationHelp = "a duration such as 90s, 30m, 1h30m, 1.5h or 7d"
}
