import APITraceFormat
import Foundation

/// The read-and-send loop of an OTLP export: reads the trace files once through the reading layer,
/// maps each new event (``OTLPMapping``), sends them in bounded batches, and then the cumulative
/// metrics.
///
/// Each event is exported once across runs with the ``CumulativeExport`` state that `export --state`
/// keeps: a batch's events are marked (and the state saved) only once the receiver accepted it, so
/// a run that stops at a refusal or an unreachable endpoint resumes at the first unsent event. The
/// metrics are cumulative totals of what was sent, so sending them again is harmless.
///
/// ```swift
/// var state = CumulativeExport(selection: "otlp all")
/// let sender = OTLPSender(endpoint: OTLPEndpoint(base: URL(string: "http://127.0.0.1:4318")!))
/// let outcome = OTLPExport(deliver: { sender.send($1, signal: $0) }).run(TraceExportReader(), ["traces/"], state: &state)
/// ```
public struct OTLPExport {
    /// Sends one encoded payload of a signal (as ``prepare`` made it, when set); anything but `.sent` stops the export.
    public var deliver: (OTLPEndpoint.Signal, [UInt8]) -> OTLPSender.Outcome
    /// Makes the body ``deliver`` gets from each encoded payload, on the reading threads, so the
    /// sending lanes only send: ``OTLPSender/body(_:)`` (gzip) with ``OTLPSender/send(body:signal:)``.
    /// A payload it cannot prepare (it throws) stops the export. Nil: `deliver` gets the encoded payload.
    public var prepare: (([UInt8]) throws -> [UInt8])?
    /// The encoding payloads are made in.
    public var encoding: OTLPEndpoint.Encoding
    /// Most spans plus log records per batch.
    public var batchSize: Int
    /// The default of ``batchSize`` for an encoding: few large requests cost less than many, and
    /// both stay well under a Collector's 4 MiB receive limit. On generated events a protobuf batch
    /// of 8192 is about 2.1 MB before gzip; JSON spells out keys and ids, so 4096 make about 2.3 MB.
    public static func defaultBatchSize(for encoding: OTLPEndpoint.Encoding) -> Int { encoding == .protobuf ? 8192 : 4096 }
    /// About the most bytes of text per batch (4 MiB, within every receiver's default limit): a
    /// batch of long lines is sent before it reaches ``batchSize``.
    public var batchBytes = 4 << 20
    /// Threads reading, mapping and encoding files at once (each file is read by one). Default: twice
    /// the core count, so the kernel shares the cores among files to their end: with one thread a
    /// core, the thread that lost time to the sending threads read its last file alone on one core.
    public var readingThreads = 2 * ProcessInfo.processInfo.activeProcessorCount
    /// Files sent at once (each file's batches strictly one after the other, so ``commit`` marks stay
    /// exactly-once): at most one lane per reading thread. 1, the default: ``deliver`` and
    /// ``commit`` are called on the caller's thread. More: ``deliver`` is called from several threads
    /// at once and must allow it (``OTLPSender/send(body:signal:)`` does); ``commit`` is still called
    /// one batch at a time.
    public var sendingLanes = 1
    /// Called after each accepted batch with the state as it now stands (to save it).
    public var commit: (CumulativeExport) -> Void
    /// Whether the state keeps cumulative totals and the run ends by sending them to `/v1/metrics`.
    /// Off for a forwarder of single files (the collector's), whose totals are on its own `/metrics`.
    public var sendsMetrics = true

    /// Creates an export; without a `batchSize`, the encoding's default (``defaultBatchSize(for:)``).
    public init(
        encoding: OTLPEndpoint.Encoding = .protobuf, batchSize: Int? = nil,
        commit: @escaping (CumulativeExport) -> Void = { _ in },
        deliver: @escaping (OTLPEndpoint.Signal, [UInt8]) -> OTLPSender.Outcome
    ) {
        self.encoding = encoding
        self.batchSize = max(1, batchSize ?? Self.defaultBatchSize(for: encoding))
        self.commit = commit
        self.deliver = deliver
    }

    /// What a run did.
    public struct Outcome: Sendable {
        /// What reading found (usable files, warnings, every file found).
        public var read = TraceExportReader.Outcome()
        /// Spans and log records accepted by the receiver in this run.
        public var spans = 0
        public var logs = 0
        /// Requests accepted and bytes they carried (after gzip, when on).
        public var requests = 0
        public var bytesOnWire = 0
        /// Why the run stopped before the end, if it did (names the endpoint, never a header).
        public var failure: String?
    }

    /// Reads the files under `paths` that `reader` selects, sends their events not exported before
    /// according to `state`, then the cumulative metrics of `state`.
    ///
    /// Reading, mapping and encoding run on threads of their own (``readingThreads``, a file each),
    /// a few batches ahead of the sending (``deliver`` and ``commit`` are called on the caller's
    /// thread, one batch at a time, unless ``sendingLanes`` says otherwise): the reader's `keepFile` and `keepEvent` are called on those
    /// threads, possibly at once.
    public func run(_ reader: TraceExportReader, _ paths: [String], state: inout CumulativeExport) -> Outcome {
        var outcome = Outcome()
        state.markStartIfMissing()
        let found = TraceFileDiscovery.find(paths)
        outcome.read = TraceExportReader.Outcome(warnings: found.warnings, filesFound: found.files)
        // Where each file resumes is decided before reading starts, as the reading runs ahead of the acceptances.
        let plan = TraceFileSelection.select(found.files, since: reader.since, until: reader.until).map { ($0, state.startFile($0)) }

        // Files are read in parallel, each reader taking every n-th: a file's batches stay in order
        // (its marks only grow), batches of different files may interleave. Each lane sends the
        // batches of its readers one at a time (see `OTLPSendingLanes`).
        let readers = max(1, min(plan.count, readingThreads))
        let lanes = max(1, min(readers, sendingLanes))
        let queues = (0..<lanes).map { lane in
            let fed = (readers - lane + lanes - 1) / lanes
            return OTLPBatchQueue<OTLPEncodedBatch>(capacity: 2 * fed, producers: fed)
        }
        let producers = (0..<readers).map { k in
            OTLPBatchProducer(
                reader: reader, plan: plan.enumerated().filter { $0.offset % readers == k }.map(\.element), encoding: encoding,
                batchSize: batchSize, batchBytes: batchBytes, keepsMetrics: sendsMetrics, prepare: prepare, queue: queues[k % lanes])
        }
        for producer in producers {
            let thread = Thread { [producer] in producer.run() }
            thread.name = "apitrace.otlp.read"
            thread.stackSize = 4 << 20
            thread.start()
        }
        (state, outcome) = OTLPSendingLanes(queues: queues, state: state, outcome: outcome, deliver: deliver, commit: commit).run()
        for queue in queues { queue.waitUntilFinished() }
        var serviceNames: [String: Int] = [:]
        for producer in producers {
            outcome.read.usableFiles += producer.usableFiles
            outcome.read.warnings += producer.warnings
            serviceNames.merge(producer.serviceNames, uniquingKeysWith: +)
        }
        if outcome.failure == nil, sendsMetrics {
            let name = serviceNames.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? "unknown_service"
            let groups = state.metrics.otlpMetrics(serviceName: name)
            if !groups.isEmpty {
                let start = UInt64(max(0, state.startedMilliseconds ?? 0)) &* 1_000_000
                let now = UInt64(max(0, TraceTimestamp.now().millisecondsSince1970)) &* 1_000_000
                let payload = encoding == .protobuf
                    ? OTLPProtobufEncoding.metrics(groups, start: start, time: now) : OTLPJSONEncoding.metrics(groups, start: start, time: now)
                do {
                    switch deliver(.metrics, try prepare?(payload) ?? payload) {
                    case .sent(_, let bytes):
                        outcome.requests += 1
                        outcome.bytesOnWire += bytes
                    case .failed(_, let reason), .rejected(_, let reason):
                        outcome.failure = reason
                    }
                } catch {
                    outcome.failure = "cannot prepare the payload: \(error)"
                }
            }
        }
        return outcome
    }
}
