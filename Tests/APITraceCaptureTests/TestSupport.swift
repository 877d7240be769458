import APITraceCapture
import Foundation

/// Collects log records from a ``LoggingFunction``.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [LogRecord] = []

    var records: [LogRecord] { lock.withLock { storage } }

    func function(minimumLevel: LogLevel = .trace) -> LoggingFunction {
        LoggingFunction(minimumLevel: minimumLevel) { record in self.lock.withLock { self.storage.append(record) } }
    }
}

