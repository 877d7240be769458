import APITraceAnalysis
import APITraceFormat
import ArgumentParser

/// The instants `alert` options take (--now, --since, --until), parsed as `apitrace report` parses them.
enum AlertTime {
    /// Parses an RFC 3339 instant, a duration back from now (`7d`, `2h`) as `apitrace report`
    /// takes them, or `now`, for --now, --since and --until.
    static func parse(_ text: String, option: String) throws -> TraceTimestampValue {
        do {
            return .init(try TraceFilter.parseTime(text, option: option))
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

/// A timestamp value for options (wrapping keeps ArgumentParser's parsing in one place).
struct TraceTimestampValue {
    var timestamp: TraceTimestamp
    init(_ timestamp: TraceTimestamp) { self.timestamp = timestamp }
}
