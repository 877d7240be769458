import Foundation
public import APITraceFormat

/// The window and the baseline of a comparison (`apitrace report --compare ... --baseline ...`),
/// each a ``TraceFilter``, resolved from the report's own filter and two selectors.
///
/// A selector is one of:
///
/// - a **duration** (``TimeGrammar``: `1h`, `90m`, `7d`): for `--baseline`, the span of that
///   length right before the window starts (`--since 1h --baseline 24h`: the 24 hours before the
///   last hour); for `--compare`, the last span of that length before the window's end;
/// - a **range** `FROM..UNTIL`, each end an instant (RFC 3339, `now`, or a duration back from now;
///   either end may be empty: `2026-11-20T00:00:00Z..2026-11-21T00:00:00Z`, `48h..24h`);
/// - **`app_version=V`**: the files whose header `app_version` is `V`, over the window's time range
///   (`--compare app_version=2.4.0 --baseline app_version=2.3.1`).
///
/// Without `--compare` the window is what the report's filters select. Route and host filters
/// apply to both sides.
///
/// ```swift
/// let windows = try ComparisonWindows(report: try TraceFilter(since: "1h"), compare: nil, baseline: "24h")
/// ```
public struct ComparisonWindows: Sendable, Equatable {
    /// The events being explained.
    public var window: TraceFilter
    /// The events they are compared against.
    public var baseline: TraceFilter
    /// How the window was chosen, for the report (`since 2026-11-22T09:00:00Z`, `app_version=2.4.0`).
    public var windowDescription: String
    /// How the baseline was chosen.
    public var baselineDescription: String

    /// A selector as written.
    public enum Selector: Sendable, Equatable {
        /// A span of this many milliseconds.
        case duration(Int64)
        /// An explicit time range; either end may be open.
        case range(since: TraceTimestamp?, until: TraceTimestamp?)
        /// Files of this app version.
        case appVersion(String)

        /// Parses `1h`, `FROM..UNTIL` or `app_version=V`.
        public static func parse(_ text: String, option: String, now: TraceTimestamp) throws(InvalidSelector) -> Selector {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("app_version=") {
                let version = String(trimmed.dropFirst("app_version=".count))
                guard !version.isEmpty else { throw InvalidSelector(option: option, text: text, reason: "app_version= needs a version, such as app_version=2.3.1") }
                return .appVersion(version)
            }
            if let r = trimmed.range(of: "..") {
                let from = String(trimmed[..<r.lowerBound]), until = String(trimmed[r.upperBound...])
                func instant(_ s: String) throws(InvalidSelector) -> TraceTimestamp? {
                    guard !s.isEmpty else { return nil }
                    guard let t = TimeGrammar.instant(s, now: now) else {
                        throw InvalidSelector(option: option, text: text, reason: "\(s) is not \(TimeGrammar.instantHelp)")
                    }
                    return t
                }
                let since = try instant(from), end = try instant(until)
                if let since, let end, since >= end {
                    throw InvalidSelector(option: option, text: text, reason: "the range is empty: \(since.rfc3339) is not before \(end.rfc3339)")
                }
                return .range(since: since, until: end)
            }
            if let ms = TimeGrammar.milliseconds(trimmed), ms > 0 { return .duration(ms) }
            throw InvalidSelector(option: option, text: text, reason: "expected \(TimeGrammar.durationHelp), a range FROM..UNTIL of instants, or app_version=VERSION")
        }
    }

    /// A selector that cannot be used, with what to write instead.
    public struct InvalidSelector: Error, Sendable, Equatable, CustomStringConvertible {
        /// The option, `--compare` or `--baseline`.
        public var option: String
        /// The text given.
        public var text: String
        /// What is wrong.
        public var reason: String
        public var description: String { "\(option) \(text): \(reason)" }
    }

    /// Resolves the two sides from the report's filter and the selectors' text.
    public init(report: TraceFilter, compare: String?, baseline: String, now: TraceTimestamp = .now()) throws(InvalidSelector) {
        var window = report
        var windowDescription = Self.describe(report)
        if let compare {
            switch try Selector.parse(compare, option: "--compare", now: now) {
            case .duration(let ms):
                let end = report.until ?? now
                window.since = end.adding(milliseconds: -ms)
                window.until = end
            case .range(let since, let until):
                window.since = since
                window.until = until
            case .appVersion(let version):
                window.appVersion = version
            }
            windowDescription = Self.describe(window)
        }
        var base = window
        switch try Selector.parse(baseline, option: "--baseline", now: now) {
        case .duration(let ms):
            guard let start = window.since else {
                throw InvalidSelector(option: "--baseline", text: baseline, reason: "a baseline duration is the span before the window, which needs a start: add --since (or --compare DURATION)")
            }
            base.since = start.adding(milliseconds: -ms)
            base.until = start
        case .range(let since, let until):
            base.since = since
            base.until = until
        case .appVersion(let version):
            base.appVersion = version
        }
        self.window = window
        self.baseline = base
        self.windowDescription = windowDescription
        self.baselineDescription = Self.describe(base)
    }

    /// `2026-11-22T09:00:00Z .. 2026-11-22T10:00:00Z, app_version=2.4.0`.
    static func describe(_ f: TraceFilter) -> String {
        var parts: [String] = []
        if f.since != nil || f.until != nil {
            parts.append("\(f.since?.rfc3339 ?? "start") .. \(f.until?.rfc3339 ?? "end")")
        } else {
            parts.append("all time")
        }
        if let v = f.appVersion { parts.append("app_version=\(v)") }
        if let r = f.route { parts.append("route=\(r)") }
        if let h = f.host { parts.append("host=\(h)") }
        return parts.joined(separator: ", ")
    }
}
