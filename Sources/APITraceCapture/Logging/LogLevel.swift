/// Severity of a log line, in the same order as swift-log's `Logger.Level`.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Finest detail, such as redacted request headers.
    case trace
    /// One line per request.
    case debug
    /// Notable but expected.
    case info
    /// Normal but significant.
    case notice
    /// Something to look at, such as a decode failure.
    case warning
    /// A recorded error.
    case error
    /// Needs attention now.
    case critical

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Lower-case name as written in `log` events: `trace` ... `critical`.
    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }
}
