import APITraceCapture
import Foundation

/// A tracer writing to memory, with apitrace's own log lines off and no rate limit unless asked.
func makeTracer(
    errorRateLimit: RateLimit? = nil, sampling: Sampling = Sampling(), logging: LoggingFunction = .disabled,
    redaction: Redaction = Redaction(), eventHook: (@Sendable (TraceEvent) -> TraceEvent?)? = nil
) -> (APITracer, InMemoryTraceSink) {
    let sink = InMemoryTraceSink()
    let configuration = APITracer.Configuration(
        redaction: redaction, sampling: sampling, errorRateLimit: errorRateLimit, logging: logging, eventHook: eventHook
    )
    return (APITracer(sinks: [sink], configuration: configuration), sink)
}

extension TraceEvent {
    var request: TraceEvent.Request? { if case .request(let r) = payload { r } else { nil } }
    var decodeFailure: TraceEvent.DecodeFailure? { if case .decodeFailure(let d) = payload { d } else { nil } }
    var recordedError: TraceEvent.RecordedError? { if case .error(let e) = payload { e } else { nil } }
    var log: TraceEvent.Log? { if case .log(let l) = payload { l } else { nil } }
    var dropped: TraceEvent.Dropped? { if case .dropped(let d) = payload { d } else { nil } }
}

/// Collects log records from a ``LoggingFunction``.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [LogRecord] = []

    var records: [LogRecord] { lock.withLock { storage } }

    func function(minimumLevel: LogLevel = .trace) -> LoggingFunction {
        LoggingFunction(minimumLevel: minimumLevel) { record in self.lock.withLock { self.storage.append(record) } }
    }
}

