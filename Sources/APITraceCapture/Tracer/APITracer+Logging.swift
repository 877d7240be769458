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
        var safeMetadata = metadata
        for (key, value) in metadata {
            safeMetadata[key] = redaction.isSensitiveKey(key) ? redaction.replacement : redaction.redactText(value)
        }
        logging.write(LogRecord(level: level, message: redaction.redactText(message()), metadata: safeMetadata, file: file, line: line))
    }
}
