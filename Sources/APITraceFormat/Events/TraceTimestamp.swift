public import Foundation

/// An instant in a trace, in whole milliseconds since 1970-01-01T00:00:00Z.
///
/// Traces store instants as RFC 3339 UTC text with milliseconds (`2026-11-22T10:00:00.123Z`).
/// Holding the integer keeps capturing a timestamp on the caller's thread to one clock read;
/// the text is produced on the background writer.
public struct TraceTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch (UTC).
    public var millisecondsSince1970: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    /// Creates a timestamp from a `Date`, truncated to the millisecond.
    public init(_ date: Date) {
        self.millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The current wall-clock time.
    public static func now() -> TraceTimestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return TraceTimestamp(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// The same instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (lhs: TraceTimestamp, rhs: TraceTimestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// Adds milliseconds.
    public func adding(milliseconds: Int64) -> TraceTimestamp {
        TraceTimestamp(millisecondsSince1970: millisecondsSince1970 + milliseconds)
    }

    /// RFC 3339 text in UTC with milliseconds, e.g. `2026-11-22T10:00:00.123Z`.
    public var description: String { rfc3339 }

    /// RFC 3339 text in UTC with milliseconds, e.g. `2026-11-22T10:00:00.123Z`.
    public var rfc3339: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Basic ISO 8601 text used in file names, e.g. `20261122T100000Z`.
    public var basicISO8601: String {
        let c = civil
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return pad(c.year, 4) + pad(c.month, 2) + pad(c.day, 2) + "T" + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2) + "Z"
    }

    /// Appends the RFC 3339 text to a byte buffer without allocating a `String`.
    package func appendRFC3339(to bytes: inout [UInt8]) {
        let c = civil
        func two(_ v: Int) {
            bytes.append(UInt8(48 + v / 10)); bytes.append(UInt8(48 + v % 10))
        }
        let y = c.year
        bytes.append(UInt8(48 + (y / 1000) % 10)); bytes.append(UInt8(48 + (y / 100) % 10))
        bytes.append(UInt8(48 + (y / 10) % 10)); bytes.append(UInt8(48 + y % 10))
        bytes.append(UInt8(ascii: "-")); two(c.month)
        bytes.append(UInt8(ascii: "-")); two(c.day)
        bytes.append(UInt8(ascii: "T")); two(c.hour)
        bytes.append(UInt8(ascii: ":")); two(c.minute)
        bytes.append(UInt8(ascii: ":")); two(c.second)
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(48 + c.millisecond / 100)); two(c.millisecond % 100)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Calendar fields in UTC (proleptic Gregorian), from Howard Hinnant's `civil_from_days`.
    var civil: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int) {
        let ms = millisecondsSince1970
        var days = EpochBuckets.index(of: ms, width: 86_400_000)
        let msOfDay = Int(ms - days * 86_400_000)
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day, msOfDay / 3_600_000, (msOfDay / 60_000) % 60, (msOfDay / 1000) % 60, msOfDay % 1000)
    }

    /// Days since the epoch for a civil date, from Howard Hinnant's `days_from_civil`.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension TraceTimestamp {
    /// Parses RFC 3339 text (`2026-11-22T10:00:00Z`, `2026-11-22T10:00:00.123Z`,
    /// `2026-11-22T11:00:00.5+01:00`); fractions beyond milliseconds are truncated.
    /// Returns `nil` for anything else.
    public init?(rfc3339 text: String) {
        var text = text
        let parsed = text.withUTF8 { TraceTimestamp.parse(UnsafeRawBufferPointer($0)) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Parses RFC 3339 bytes; see ``init(rfc3339:)``.
    ///
    /// Only sane instants are accepted: years 1970 to 9999, real calendar days, offsets within
    /// ±23:59. Anything else (a producer's broken clock, a hostile line) is `nil`, never a trap.
    public static func parse(_ b: UnsafeRawBufferPointer) -> TraceTimestamp? {
        let n = b.count
        guard n >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            var v = 0
            for i in start..<(start + count) {
                let d = Int(b[i]) - 48
                guard d >= 0, d <= 9 else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
              let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
              let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
              let second = digits(17, 2),
              year >= 1970, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        var millis = 0
        if i < n, b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 100
            let start = i
            while i < n, b[i] >= 48, b[i] <= 57 {
                millis += Int(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < n else { return nil }
        var offsetMinutes = 0
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard i + 6 == n, let oh = digits(i + 1, 2), b[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2),
                  oh < 24, om < 60 else { return nil }
            offsetMinutes = (oh * 60 + om) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        default:
            return nil
        }
        guard i == n else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        // Checked on the instant, after the offset: 9999-12-31T23:59:59-23:59 is in year 10000.
        guard seconds >= 0, seconds < 253_402_300_800 else { return nil }
        return TraceTimestamp(millisecondsSince1970: seconds * 1000 + Int64(millis))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
