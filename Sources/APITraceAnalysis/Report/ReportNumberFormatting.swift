import Foundation

/// Number and time formatting shared by the text, Markdown and HTML formats.
enum ReportNumberFormatting {
    /// `1234567` -> `1,234,567`.
    static func count(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return n < 0 ? "-" + out : out
    }

    /// A count that may be fractional (estimates), rounded to a whole number.
    static func estimate(_ x: Double) -> String {
        count(Int(x.rounded()))
    }

    /// `0.02437` -> `2.44 %`.
    static func percent(_ ratio: Double) -> String {
        String(format: "%.2f %%", ratio * 100)
    }

    /// `0.914` -> `91%` (a share of the extra failures).
    static func wholePercent(_ ratio: Double) -> String {
        "\(Int((ratio * 100).rounded()))%"
    }

    /// Milliseconds: `0.42 ms`, `95.2 ms`, `1.23 s`, `2.5 min`; `-` for `nil`.
    static func duration(_ ms: Double?) -> String {
        guard let ms else { return "-" }
        if ms < 10 { return String(format: "%.2f ms", ms) }
        if ms < 1000 { return String(format: "%.1f ms", ms) }
        if ms < 60_000 { return String(format: "%.2f s", ms / 1000) }
        return String(format: "%.1f min", ms / 60_000)
    }

    /// Bytes: `512 B`, `1.2 KB`, `3.4 MB`, `5.6 GB` (powers of 1000).
    static func bytes(_ n: Int64) -> String {
        let x = Double(n)
        if x < 1000 { return "\(n) B" }
        if x < 1e6 { return String(format: "%.1f KB", x / 1e3) }
        if x < 1e9 { return String(format: "%.1f MB", x / 1e6) }
        return String(format: "%.2f GB", x / 1e9)
    }

    /// A plain number, up to `decimals` decimals without trailing zeros.
    static func number(_ x: Double, decimals: Int = 1) -> String {
        var s = String(format: "%.\(decimals)f", x)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s
    }

    /// A bucket width: `30 s`, `5 min`, `1 h`, `1 d`.
    static func bucket(_ seconds: Int64) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400) d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600) h" }
        if seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }

    /// A span: `45 s`, `12 min`, `3 h 20 min`, `2 d 4 h`.
    static func span(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        if s < 86_400 { return "\(s / 3600) h \(s % 3600 / 60) min" }
        return "\(s / 86_400) d \(s % 86_400 / 3600) h"
    }
}
