/// Spans and log records waiting to be sent, grouped by the resource they come from, as one
/// `ExportTraceServiceRequest` and one `ExportLogsServiceRequest` will carry them.
public struct OTLPBatch: Sendable {
    /// Resources in the order first met, each with its spans.
    public private(set) var spans: [(resource: OTLPResource, spans: [OTLPSpan])] = []
    /// Resources in the order first met, each with its log records.
    public private(set) var logs: [(resource: OTLPResource, records: [OTLPLogRecord])] = []
    private var spanIndex: [OTLPResource: Int] = [:]
    private var logIndex: [OTLPResource: Int] = [:]
    private var lastSpanGroup: Int?
    private var lastLogGroup: Int?
    /// Spans held.
    public private(set) var spanCount = 0
    /// Log records held.
    public private(set) var logCount = 0

    /// Creates an empty batch.
    public init() {}

    /// Items held.
    public var count: Int { spanCount + logCount }

    /// Adds a span or log record of `resource`.
    public mutating func add(_ item: OTLPMapping.Item, resource: OTLPResource) {
        switch item {
        case .span(let span):
            if let i = lastSpanGroup, spans[i].resource == resource {
                // Consecutive events mostly share their resource: no hashing.
                spans[i].spans.append(span)
            } else if let i = spanIndex[resource] {
                lastSpanGroup = i
                spans[i].spans.append(span)
            } else {
                lastSpanGroup = spans.count
                spanIndex[resource] = spans.count
                spans.append((resource, [span]))
            }
            spanCount += 1
        case .log(let record):
            if let i = lastLogGroup, logs[i].resource == resource {
                logs[i].records.append(record)
            } else if let i = logIndex[resource] {
                lastLogGroup = i
                logs[i].records.append(record)
            } else {
                lastLogGroup = logs.count
                logIndex[resource] = logs.count
                logs.append((resource, [record]))
            }
            logCount += 1
        }
    }
}

/// The instrumentation scope every export names.
enum OTLPScope {
    static let name = "apitrace"
}
