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
    /// About how many bytes the items' texts take (names, bodies, attribute keys and values), to
    /// bound a request's size whatever the lines hold (a line may be up to 1 MiB).
    public private(set) var approximateBytes = 0

    /// Creates an empty batch.
    public init() {}

    /// Items held.
    public var count: Int { spanCount + logCount }

    /// Adds a span or log record of `resource`.
    public mutating func add(_ item: OTLPMapping.Item, resource: OTLPResource) {
        switch item {
        case .span(let span):
            approximateBytes += 64 + span.name.utf8.count + Self.size(span.attributes) + span.events.reduce(0) { $0 + 32 + Self.size($1.attributes) }
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
            approximateBytes += 64 + record.body.utf8.count + Self.size(record.attributes)
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

extension OTLPBatch {
    static func size(_ attributes: [OTLPAttribute]) -> Int {
        attributes.reduce(0) { total, a in
            if case .string(let s) = a.value { return total + 8 + a.key.utf8.count + s.utf8.count }
            return total + 16 + a.key.utf8.count
        }
    }
}

/// The instrumentation scope every export names.
enum OTLPScope {
    static let name = "apitrace"
}
