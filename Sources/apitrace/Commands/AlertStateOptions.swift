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
