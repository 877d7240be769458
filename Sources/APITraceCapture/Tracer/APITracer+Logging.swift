import APITraceFormat

extension APITracer {
    /// Writes one of apitrace's own log lines through ``Configuration/logging``, redacted.
    ///
    /// The message is only built when the level is enabled.
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String, metadata: [String: String] = [:],
        file: String = #fileID, line: Int = #line
    ) {
        guard logging.isEnabled(level) else { return }
        logging.write(LogRecord(
            level: level, message: redaction.redactText(message()), metadata: redaction.redact(values: metadata), file: file, line: line
        ))
    }
}
