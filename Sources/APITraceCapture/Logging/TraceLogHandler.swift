import APITraceFormat
public import Logging

/// A swift-log `LogHandler` that records every line as a `log` event in the traces.
///
/// ```swift
/// LoggingSystem.bootstrap { label in TraceLogHandler(label: label, tracer: .shared) }
/// // or for one logger:
/// let logger = Logger(label: "api") { label in TraceLogHandler(label: label, tracer: tracer) }
/// logger.warning("retrying", metadata: ["attempt": "2"])
/// ```
///
/// Messages and metadata are redacted by the tracer like any other event.
public struct TraceLogHandler: LogHandler {
    /// The logger's label, written as the event's `source`.
    public let label: String
    /// Where the events go.
    public let tracer: APITracer
    /// Lines below this level are dropped by `Logger`. Default `info`.
    public var logLevel: Logger.Level
    /// Metadata added to every line of this handler.
    public var metadata: Logger.Metadata = [:]
    /// Metadata added to every line from the task context.
    public var metadataProvider: Logger.MetadataProvider?

    /// Creates a handler recording into `tracer`.
    public init(label: String, tracer: APITracer, logLevel: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.tracer = tracer
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
    }

    /// Records the line as a `log` event.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var strings: [String: String] = [:]
        for (key, value) in merged { strings[key] = value.description }
        let level = LogLevel(event.level).description
        tracer.record(TraceEvent(.log(.init(level: level, message: event.message.description, metadata: strings, source: label))))
    }

    /// Reads or writes one metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}
