import Foundation

/// Where traces live when nobody says otherwise.
public enum TraceDirectory {
    /// The environment variable that overrides the default folder.
    public static let environmentVariable = "APITRACE_DIR"

    /// The folder the capture side writes to and `apitrace report` reads by default:
    /// `$APITRACE_DIR` when set; otherwise the caches folder on Apple platforms
    /// (`Library/Caches/apitrace/traces`), and `$XDG_STATE_HOME/apitrace/traces`
    /// (`~/.local/state/apitrace/traces`) elsewhere.
    public static var `default`: String {
        let env = ProcessInfo.processInfo.environment
        if let dir = env[environmentVariable], !dir.isEmpty { return dir }
        #if canImport(Darwin)
        if let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first {
            return caches.appendingPathComponent("apitrace/traces").path
        }
        #endif
        if let state = env["XDG_STATE_HOME"], !state.isEmpty { return state + "/apitrace/traces" }
        return NSHomeDirectory() + "/.local/state/apitrace/traces"
    }
}
