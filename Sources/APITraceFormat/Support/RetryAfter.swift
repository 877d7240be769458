/// The one parser of an HTTP `Retry-After` header (RFC 9110, section 10.2.3), bounded so that no
/// value a server sends can trap or stall the caller.
///
/// Accepts delay-seconds (`120`, and, leniently, a decimal such as `1.5`) and an HTTP date in any of
/// the three forms RFC 9110 requires a recipient to read (`Sun, 06 Nov 1994 08:49:37 GMT`,
/// `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`). Anything else (`inf`, `nan`,
/// `1e300`, `-5`, `soon`, an impossible date) is ignored: the caller falls back to its own backoff.
/// A delay longer than `cap` is cut to `cap`; a date in the past is a delay of zero.
///
/// ```swift
/// RetryAfter.parse("120", cap: .seconds(3600))                    // 120 s
/// RetryAfter.parse("99999999999999999999", cap: .seconds(3600))   // 3600 s
/// RetryAfter.parse("inf", cap: .seconds(3600))                    // nil
/// ```
package enum RetryAfter {
    /// Parses `value` against the current time `nowMilliseconds` (ms since 1970); nil when it is not a valid `Retry-After`.
    package static func parse(_ value: some StringProtocol, nowMilliseconds: Int64, cap: Duration) -> Duration? {
        let capMs = max(0, cap.wholeMilliseconds)
        let text = value.trimmedOfBlanks()
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if let ms = delaySeconds(text) { return .milliseconds(min(ms, capMs)) }
        guard let date = httpDate(text) else { return nil }
        let delay = date &- nowMilliseconds
        return .milliseconds(min(max(0, delay), capMs))
    }

    /// Milliseconds of plain decimal seconds (`digits`, optionally `.digits`); never traps on size.
    static func delaySeconds(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit) else { return nil }
        var fraction: Substring = ""
        if parts.count == 2 {
            fraction = parts[1]
            guard !fraction.isEmpty, fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        }
        // More than 12 digits of seconds is over 30,000 years: saturate instead of overflowing.
        let trimmed = whole.drop { $0 == "0" }
        if trimmed.count > 12 { return Int64.max / 2 }
        var ms = (Int64(trimmed) ?? 0) * 1000
        for (i, digit) in fraction.prefix(3).enumerated() {
            ms += Int64(digit.asciiValue! - 48) * [100, 10, 1][i]
        }
        return ms
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Milliseconds since 1970 of an HTTP date in one of its three forms, or nil.
    static func httpDate(_ text: String) -> Int64? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?, month: Int?, year: Int?, clock: String?
        switch tokens.count {
        case 6 where tokens[5] == "GMT":  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            (day, month, year, clock) = (Int(tokens[1]), monthNumber(tokens[2]), Int(tokens[3]), tokens[4])
        case 4 where tokens[3] == "GMT":  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = tokens[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let yy = Int(parts[2]), parts[2].count == 2 else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            (day, month, year, clock) = (Int(parts[0]), monthNumber(parts[1]), yy < 70 ? 2000 + yy : 1900 + yy, tokens[2])
        case 5:  // asctime: Sun Nov  6 08:49:37 1994
            (day, month, year, clock) = (Int(tokens[2]), monthNumber(tokens[1]), Int(tokens[4]), tokens[3])
        default:
            return nil
        }
        guard let day, let month, let year, let clock, (1...31).contains(day), (1900...9999).contains(year) else { return nil }
        let hms = clock.split(separator: ":").map { Int($0) }
        guard hms.count == 3, let h = hms[0], let m = hms[1], let s = hms[2], (0...23).contains(h), (0...59).contains(m), (0...60).contains(s) else {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 24 + Int64(h)) * 60 + Int64(m)) * 60_000 + Int64(s) * 1000
    }

    private static func monthNumber(_ name: String) -> Int? {
        months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((month + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension StringProtocol {
    fileprivate func trimmedOfBlanks() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return String(s)
    }
}
