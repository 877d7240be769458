import Foundation

/// Where apitrace's own log lines go: a value you can swap, like Jayme's `loggingFunction`.
///
/// Use a preset or any closure:
///
/// ```swift
/// var configuration = APITracer.Configuration()
/// configuration.logging = .stderr(minimumLevel: .debug)   // readable lines on standard error
/// configuration.logging = .disabled                        // nothing
/// configuration.logging = .swiftLog(Logger(label: "api"))  // into swift-log
/// configuration.logging = LoggingFunction(minimumLevel: .info) { record in myLogger.log(record.message) }
/// ```
///
/// ```text
/// apitrace debug: GET /apps/{id} -> 200 (12.4 ms)
/// apitrace warning: decode failure AppsResponse keyNotFound at data.apps[1].stability (route /apps)
/// ```
public struct LoggingFunction: Sendable {
    /// Lines below this level are not built or written.
    public var minimumLevel: LogLevel
    /// Turns every line off when `false`.
    public var isOn: Bool
    /// Receives every enabled line, already redacted.
    public var write: @Sendable (LogRecord) -> Void

    /// Creates a logging function from any closure.
    public init(minimumLevel: LogLevel = .info, isOn: Bool = true, write: @escaping @Sendable (LogRecord) -> Void) {
        self.minimumLevel = minimumLevel
        self.isOn = isOn
        self.write = write
    }

    /// Whether a line of `level` would be written.
    @inlinable
    public func isEnabled(_ level: LogLevel) -> Bool { isOn && level >= minimumLevel }

    /// Readable lines on standard error, `warning` and above.
    public static let stderr = LoggingFunction.stderr(minimumLevel: .warning)

    /// Readable lines on standard error from `minimumLevel` up.
    public static func stderr(minimumLevel: LogLevel) -> LoggingFunction {
        LoggingFunction(minimumLevel: minimumLevel) { record in
            FileHandle.standardError.write(Data((record.formatted + "\n").utf8))
        }
    }

    /// Writes nothing.
    public static let disabled = LoggingFunction(minimumLevel: .critical, isOn: false) { _ in }
}
