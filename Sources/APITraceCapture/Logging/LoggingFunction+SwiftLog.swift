public import Logging

extension LoggingFunction {
    /// Forwards apitrace's own log lines to a swift-log `Logger`, at the logger's level.
    ///
    /// ```swift
    /// configuration.logging = .swiftLog(Logger(label: "com.example.api"))
    /// ```
    public static func swiftLog(_ logger: Logger) -> LoggingFunction {
        LoggingFunction(minimumLevel: LogLevel(logger.logLevel)) { record in
            var metadata = Logger.Metadata()
            for (key, value) in record.metadata { metadata[key] = .string(value) }
            logger.log(
                level: record.level.swiftLogLevel, "\(record.message)", metadata: metadata,
                source: "apitrace", file: record.file, function: "", line: UInt(max(0, record.line))
            )
        }
    }
}

extension LogLevel {
    /// The matching swift-log level.
    public var swiftLogLevel: Logger.Level {
        switch self {
        case .trace: .trace
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        case .critical: .critical
        }
    }

    /// The matching apitrace level.
    public init(_ level: Logger.Level) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
