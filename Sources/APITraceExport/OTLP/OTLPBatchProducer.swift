import APITraceFormat

/// One encoded batch, and what the receiver's acceptance of it marks in the export's state.
struct OTLPEncodedBatch: @unchecked Sendable {
    var payloads: [(OTLPEndpoint.Signal, [UInt8])] = []
    var spans = 0
    var logs = 0
    /// The batch's events with their file's app version, for the cumulative metrics (empty when not kept).
    var events: [(TraceEvent, String?)] = []
    /// Files read to their end whose last events are in this batch (or before it).
    var ends: [(start: CumulativeExport.FileStart, events: Int, usable: Bool)] = []
    /// The file being read and the events of it sent once this batch is accepted.
    var mark: (file: String, events: Int)?
}

/// The reading side of an ``OTLPExport``: reads the planned files through the one reading layer,
/// maps each new event (``OTLPMapping``), cuts bounded batches and encodes them, handing each to
/// the sending side through an ``OTLPBatchQueue``. Runs on a thread of its own; what it found is
/// read once the queue is finished.
final class OTLPBatchProducer: @unchecked Sendable {
    private let reader: TraceExportReader
    private let plan: [(String, CumulativeExport.FileStart?)]
    private let encoding: OTLPEndpoint.Encoding
    private let batchSize: Int
    private let batchBytes: Int
    private let keepsEvents: Bool
    private let queue: OTLPBatchQueue<OTLPEncodedBatch>

    /// Read after the queue finished.
    private(set) var usableFiles = 0
    private(set) var warnings: [TraceReadWarning] = []
    private(set) var serviceNames: [String: Int] = [:]

    private var batch = OTLPBatch()
    private var events: [(TraceEvent, String?)] = []
    private var ends: [(start: CumulativeExport.FileStart, events: Int, usable: Bool)] = []

    private struct Stop: Error {}

    init(
        reader: TraceExportReader, plan: [(String, CumulativeExport.FileStart?)], encoding: OTLPEndpoint.Encoding,
        batchSize: Int, batchBytes: Int, keepsEvents: Bool, queue: OTLPBatchQueue<OTLPEncodedBatch>
    ) {
        self.reader = reader
        self.plan = plan
        self.encoding = encoding
        self.batchSize = batchSize
        self.batchBytes = batchBytes
        self.keepsEvents = keepsEvents
        self.queue = queue
    }

    func run() {
        defer { queue.finish() }
        for (path, start) in plan {
            guard let start else {
                usableFiles += 1
                continue
            }
            var keep = true
            var header: TraceFileHeader?
            // Consecutive events mostly share a session: the resource is made once per run of them.
            var resource = OTLPResource(header: nil, session: nil)
            var index = 0
            let result: TraceFileReader.Result
            do {
                result = try TraceFileReader(path: path).forEachLine { line, _ in
                    switch line {
                    case .header(let h):
                        header = h
                        resource = OTLPResource(header: h, session: nil)
                        keep = reader.keepFile(h)
                        if keep, let app = h.app, !app.isEmpty { serviceNames[app, default: 0] += 1 }
                    case .event(let event):
                        // Positions, as `export --state` counts them: the first `skip` were exported before.
                        defer { index += 1 }
                        guard index >= start.skip, keep, reader.keepEvent(event) else { return }
                        if resource.sessionID != event.session { resource.sessionID = event.session }
                        batch.add(OTLPMapping.map(event), resource: resource)
                        if keepsEvents { events.append((event, header?.appVersion)) }
                        if batch.count >= batchSize || batch.approximateBytes >= batchBytes {
                            guard emit(mark: (path, index + 1)) else { throw Stop() }
                        }
                    default: break
                    }
                }
            } catch {
                return
            }
            if result.isUsable { usableFiles += 1 }
            warnings += result.warnings
            ends.append((start, index, result.isUsable))
        }
        _ = emit(mark: nil)
    }

    /// Encodes the batch and hands it over; false once the sending side gave up.
    private func emit(mark: (file: String, events: Int)?) -> Bool {
        var encoded = OTLPEncodedBatch(spans: batch.spanCount, logs: batch.logCount, events: events, ends: ends, mark: mark)
        if batch.spanCount > 0 {
            encoded.payloads.append((.traces, encoding == .protobuf ? OTLPProtobufEncoding.traces(batch) : OTLPJSONEncoding.traces(batch)))
        }
        if batch.logCount > 0 {
            encoded.payloads.append((.logs, encoding == .protobuf ? OTLPProtobufEncoding.logs(batch) : OTLPJSONEncoding.logs(batch)))
        }
        batch = OTLPBatch()
        events.removeAll(keepingCapacity: true)
        ends.removeAll()
        return queue.push(encoded)
    }
}
