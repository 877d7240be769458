import APITraceAnalysis
import APITraceFormat
import ArgumentParser
import Foundation

/// Where `alert`, `mute` and `unmute` find the state file.
struct AlertStateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The state file (incidents, mutes, deliveries to retry); its lock is <file>.lock.", valueName: "file"))
    var state: String?

    /// `--state`, else `$APITRACE_ALERT_STATE`, else `apitrace-alert-state.json` in the current folder.
    var path: String {
        state ?? ProcessInfo.processInfo.environment["APITRACE_ALERT_STATE"] ?? "apitrace-alert-state.json"
    }
}

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
