import APITraceFormat

/// One encoded batch, and what the receiver's acceptance of it marks in the export's state.
struct OTLPEncodedBatch: @unchecked Sendable {
    /// Bodies ready to deliver (encoded, and gzipped when the export prepares them so).
    var payloads: [(OTLPEndpoint.Signal, [UInt8])] = []
    var spans = 0
    var logs = 0
    /// The cumulative metrics of the batch's events, merged into the state once it is accepted (nil when not kept).
    var metrics: OpenMetricsExporter?
    /// Files read to their end whose last events are in this batch (or before it).
    var ends: [(start: CumulativeExport.FileStart, events: Int, usable: Bool)] = []
    /// The file being read and the events of it sent once this batch is accepted.
    var mark: (file: String, events: Int)?
    /// Why a payload could not be prepared (the export stops there).
    var failure: String?
}

/// The reading side of an ``OTLPExport``: reads the planned files through the one reading layer
/// (each line scanned once into a ``TraceRecord``, no ``TraceEvent`` made unless a filter needs
/// it), maps each new event (``OTLPMapping``) straight into the encoded batch, cuts bounded
/// batches, prepares their bodies (gzip) and hands each to the sending side through an
/// ``OTLPBatchQueue``. Runs on a thread of its own; what it found is read once the queue is finished.
final class OTLPBatchProducer: @unchecked Sendable {
    private let reader: TraceExportReader
    private let plan: [(String, CumulativeExport.FileStart?)]
    private let encoding: OTLPEndpoint.Encoding
    private let batchSize: Int
    private let batchBytes: Int
    private let keepsMetrics: Bool
    private let prepare: (([UInt8]) throws -> [UInt8])?
    private let queue: OTLPBatchQueue<OTLPEncodedBatch>

    /// Read after the queue finished.
    private(set) var usableFiles = 0
    private(set) var warnings: [TraceReadWarning] = []
    private(set) var serviceNames: [String: Int] = [:]

    // The batch being built is touched several times per event, from the one thread that runs
    // ``run()``: unchecked, these accesses cost no runtime exclusivity check (2% of the export's CPU).
    @exclusivity(unchecked) private var protobuf = OTLPProtobufBatch()
    @exclusivity(unchecked) private var json = OTLPBatch()
    private var metrics: OpenMetricsExporter?
    /// The batch's events counted by the raw bytes of their labels (strings made once per series,
    /// not per event), added to ``metrics`` when the batch is cut or the file's header changes.
    @exclusivity(unchecked) private var tally: OpenMetricsExporter.FileTally?
    private var header: TraceFileHeader?
    @exclusivity(unchecked) private var scratch = OTLPMapping.Scratch()
    /// Names the resource events are read under, changed whenever it changes (across files too).
    @exclusivity(unchecked) private var resourceID = 0
    private var ends: [(start: CumulativeExport.FileStart, events: Int, usable: Bool)] = []

    init(
        reader: TraceExportReader, plan: [(String, CumulativeExport.FileStart?)], encoding: OTLPEndpoint.Encoding,
        batchSize: Int, batchBytes: Int, keepsMetrics: Bool, prepare: (([UInt8]) throws -> [UInt8])?,
        queue: OTLPBatchQueue<OTLPEncodedBatch>
    ) {
        self.reader = reader
        self.plan = plan
        self.encoding = encoding
        self.batchSize = batchSize
        self.batchBytes = batchBytes
        self.keepsMetrics = keepsMetrics
        self.prepare = prepare
        self.queue = queue
    }

    private var count: Int { encoding == .protobuf ? protobuf.count : json.count }
    private var approximateBytes: Int { encoding == .protobuf ? protobuf.approximateBytes : json.approximateBytes }

    /// A batch's metrics: limits no batch reaches, so what is past the state's own limits is
    /// decided when the batch is merged into it, in the order batches are accepted.
    private var batchLimits: OpenMetricsExporter.Limits {
        let n = batchSize + 2
        return .init(routes: n, identities: n, seriesPerFamily: n)
    }

    private func batchMetrics() -> OpenMetricsExporter? { keepsMetrics ? OpenMetricsExporter(limits: batchLimits) : nil }

    /// Adds what the tally holds to the batch's metrics and starts it again, under `header`.
    private func flushTally(then header: TraceFileHeader?) {
        guard keepsMetrics else { return }
        if let tally { metrics?.add(tally) }
        var fresh = OpenMetricsExporter.FileTally(limits: batchLimits)
        if let header { fresh.begin(header: header) }
        tally = fresh
        self.header = header
    }

    func run() {
        defer { queue.finish() }
        metrics = batchMetrics()
        flushTally(then: nil)
        var stopped = false
        for (path, start) in plan {
            guard let start else {
                usableFiles += 1
                continue
            }
            // A file's events count under its own header's app version, none until it has one.
            flushTally(then: nil)
            var keep = true
            // Consecutive events mostly share a session: the resource is made once per run of them.
            var resource = OTLPResource(header: nil, session: nil)
            var session: [UInt8]?
            var index = 0
            let scan = TraceFileReader(path: path).forEachRecordLine(header: { h, _ in
                resource = OTLPResource(header: h, session: nil)
                resourceID += 1
                session = nil
                flushTally(then: h)
                keep = reader.keepFile(h)
                if keep, let app = h.app, !app.isEmpty { serviceNames[app, default: 0] += 1 }
                // A file not kept is still read to its end, so its problems are reported and its events counted.
                return true
            }) { record, _, _ in
                // Positions, as `export --state` counts them: the first `skip` were exported before.
                defer { index += 1 }
                guard index >= start.skip, keep, keeps(record) else { return true }
                if !Self.same(session, record.session) {
                    session = record.session.map { Array($0.bytes) }
                    resource.sessionID = record.session?.string
                    resourceID += 1
                }
                if encoding == .protobuf {
                    protobuf.add(record, resource: resource, resourceID: resourceID)
                } else {
                    var builder = OTLPItemBuilder()
                    OTLPMapping.map(record, into: &builder, scratch: &scratch)
                    if let item = builder.item { json.add(item, resource: resource) }
                }
                tally?.add(record)
                if count >= batchSize || approximateBytes >= batchBytes {
                    guard emit(mark: (path, index + 1)) else { stopped = true; return false }
                }
                return true
            }
            if stopped { return }
            if scan.header != nil { usableFiles += 1 }
            warnings += scan.warnings
            ends.append((start, index, scan.header != nil))
        }
        _ = emit(mark: nil)
    }

    /// Whether the export takes this event: decided on the line when the reader can, else on its event.
    private func keeps(_ record: TraceRecord) -> Bool {
        if let keepRecord = reader.keepRecord { return keepRecord(record) }
        if reader.keepsEveryEvent { return true }
        return reader.keepEvent(record.event)
    }

    private static func same(_ kept: [UInt8]?, _ text: RawText?) -> Bool {
        guard let kept, let text else { return kept == nil && text == nil }
        return kept.withUnsafeBytes { $0.elementsEqual(text.bytes) }
    }

    /// Encodes the batch and hands it over; false once the sending side gave up.
    private func emit(mark: (file: String, events: Int)?) -> Bool {
        flushTally(then: header)
        let spans = encoding == .protobuf ? protobuf.spanCount : json.spanCount
        let logs = encoding == .protobuf ? protobuf.logCount : json.logCount
        var encoded = OTLPEncodedBatch(spans: spans, logs: logs, metrics: metrics, ends: ends, mark: mark)
        do {
            if spans > 0 {
                let payload = encoding == .protobuf ? protobuf.traces() : OTLPJSONEncoding.traces(json)
                encoded.payloads.append((.traces, try prepare?(payload) ?? payload))
            }
            if logs > 0 {
                let payload = encoding == .protobuf ? protobuf.logs() : OTLPJSONEncoding.logs(json)
                encoded.payloads.append((.logs, try prepare?(payload) ?? payload))
            }
        } catch {
            encoded.failure = "cannot prepare the payload: \(error)"
        }
        protobuf.removeAll()
        json = OTLPBatch()
        metrics = batchMetrics()
        ends.removeAll()
        return queue.push(encoded)
    }
}
