/// One of apitrace's own log lines, handed to a ``LoggingFunction``. Already redacted.
public struct LogRecord: Sendable, Equatable {
    /// Severity.
    public var level: LogLevel
    /// The message, such as `GET /apps/{id} -> 200 (12.4 ms)`.
    public var message: String
    /// Extra context as strings.
    public var metadata: [String: String]
    /// Source file (`#fileID`) that logged the line.
    public var file: String
    /// Source line that logged the line.
    public var line: Int

    /// Creates a log record.
    public init(level: LogLevel, message: String, metadata: [String: String] = [:], file: String = #fileID, line: Int = #line) {
        self.level = level
        self.message = message
        self.metadata = metadata
        self.file = file
        self.line = line
    }

    /// The line as written by ``LoggingFunction/stderr``: `apitrace warning: message key=value`.
    public var formatted: String {
        var text = "apitrace \(level): \(message)"
        for key in metadata.keys.sorted() { text += " \(key)=\(metadata[key]!)" }
        return text
    }
}
