import APITraceFormat
import Foundation

/// The collector's own counters, exported at `GET /metrics` in the OpenMetrics text format, after
/// the metrics of the events it stored (unless ``TraceCollector/Configuration/ingestMetrics`` is off).
public final class CollectorMetrics: Sendable {
    private struct Counts {
        var accepted = 0
        var duplicates = 0
        var rejected: [UploadRejection.Reason: Int] = [:]
        var receivedBytes = 0
        var storedBytes = 0
        var salvaged = 0
        var salvageDroppedBytes = 0
        var busy: [BusyReason: Int] = [:]
        var timedOut: [UploadDeadlineHandler.TimedOutPhase: Int] = [:]
    }

    private let counts = Locked(Counts())

    /// Uploads and body bytes in progress now and at their peak (the collector's admission).
    let inFlight: @Sendable () -> (uploads: Int, bytes: Int, peakUploads: Int, peakBytes: Int)

    /// The events of the stored files; nil when ingest counting is off.
    let ingest: IngestMetrics?

    /// The OTLP forwarder's counters; nil when the collector does not forward.
    public let forwarding: OTLPForwardingMetrics?

    init(
        inFlight: @escaping @Sendable () -> (uploads: Int, bytes: Int, peakUploads: Int, peakBytes: Int), ingest: IngestMetrics?,
        forwarding: OTLPForwardingMetrics? = nil
    ) {
        self.inFlight = inFlight
        self.ingest = ingest
        self.forwarding = forwarding
    }

    /// Why an upload was answered `503`.
    enum BusyReason: String, CaseIterable {
        case uploads
        case bytes
        /// The upload read too slowly while others waited, and its slot went to one of them.
        case preempted
        /// The collector began to shut down before the upload was stored.
        case shuttingDown = "shutting_down"
    }

    /// A snapshot of the counters.
    public struct Snapshot: Sendable, Equatable {
        /// Files stored for the first time.
        public var accepted: Int
        /// Files answered "already stored".
        public var duplicates: Int
        /// Uploads refused, by reason.
        public var rejected: [UploadRejection.Reason: Int]
        /// Body bytes read from clients.
        public var receivedBytes: Int
        /// Bytes of the files stored for the first time.
        public var storedBytes: Int
        /// Bodies cut short (a killed app's file) whose complete lines were stored.
        public var salvaged = 0
        /// Decompressed bytes of incomplete last lines dropped from cut bodies.
        public var salvageDroppedBytes = 0
        /// Uploads answered `503` because the collector was full.
        public var busy = 0
        /// Connections closed for missing a deadline (slow head, stalled or slow body).
        public var timedOut = 0
        /// Most uploads in progress at once.
        public var peakUploadsInFlight = 0
        /// Most body bytes held by uploads in progress at once.
        public var peakBytesInFlight = 0
    }

    func recordAccepted(bytes: Int) { counts.withLock { $0.accepted += 1; $0.storedBytes += bytes } }
    func recordDuplicate() { counts.withLock { $0.duplicates += 1 } }
    func recordRejected(_ reason: UploadRejection.Reason) { counts.withLock { $0.rejected[reason, default: 0] += 1 } }
    func recordReceived(bytes: Int) { counts.withLock { $0.receivedBytes += bytes } }
    func recordSalvaged(droppedBytes: Int) { counts.withLock { $0.salvaged += 1; $0.salvageDroppedBytes += droppedBytes } }
    func recordBusy(_ reason: BusyReason) { counts.withLock { $0.busy[reason, default: 0] += 1 } }
    func recordTimedOut(_ phase: UploadDeadlineHandler.TimedOutPhase) { counts.withLock { $0.timedOut[phase, default: 0] += 1 } }

    /// The counters now.
    public var snapshot: Snapshot {
        let usage = inFlight()
        let c = counts.withLock { $0 }
        return Snapshot(
            accepted: c.accepted, duplicates: c.duplicates, rejected: c.rejected, receivedBytes: c.receivedBytes, storedBytes: c.storedBytes,
            salvaged: c.salvaged, salvageDroppedBytes: c.salvageDroppedBytes, busy: c.busy.values.reduce(0, +),
            timedOut: c.timedOut.values.reduce(0, +), peakUploadsInFlight: usage.peakUploads, peakBytesInFlight: usage.peakBytes)
    }

    /// The media type of ``openMetricsText``.
    public static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// The counters in the OpenMetrics text format (which Prometheus scrapes), every reason listed
    /// even at 0, after the families of the events counted at ingest.
    ///
    /// Each call is a scrape: a series of the events that has not been shown before shows at 0 this time.
    public var openMetricsText: String {
        let s = snapshot
        var text = ingest?.text() ?? ""
        text += """
        # HELP apitrace_collector_files_accepted Trace files stored for the first time.
        # TYPE apitrace_collector_files_accepted counter
        apitrace_collector_files_accepted_total \(s.accepted)
        # HELP apitrace_collector_files_duplicate Uploads of a file already stored (answered 200, not stored again).
        # TYPE apitrace_collector_files_duplicate counter
        apitrace_collector_files_duplicate_total \(s.duplicates)
        # HELP apitrace_collector_files_rejected Uploads refused, by reason.
        # TYPE apitrace_collector_files_rejected counter

        """
        for reason in UploadRejection.Reason.allCases {
            text += "apitrace_collector_files_rejected_total{reason=\"\(reason.rawValue)\"} \(s.rejected[reason] ?? 0)\n"
        }
        text += """
        # HELP apitrace_collector_received_bytes Request body bytes read from clients.
        # TYPE apitrace_collector_received_bytes counter
        # UNIT apitrace_collector_received_bytes bytes
        apitrace_collector_received_bytes_total \(s.receivedBytes)
        # HELP apitrace_collector_stored_bytes Bytes of trace files stored for the first time.
        # TYPE apitrace_collector_stored_bytes counter
        # UNIT apitrace_collector_stored_bytes bytes
        apitrace_collector_stored_bytes_total \(s.storedBytes)
        # HELP apitrace_collector_files_salvaged Bodies cut short (a killed app's file) stored with their complete lines.
        # TYPE apitrace_collector_files_salvaged counter
        apitrace_collector_files_salvaged_total \(s.salvaged)
        # HELP apitrace_collector_salvage_dropped_bytes Decompressed bytes of incomplete last lines dropped from cut bodies.
        # TYPE apitrace_collector_salvage_dropped_bytes counter
        # UNIT apitrace_collector_salvage_dropped_bytes bytes
        apitrace_collector_salvage_dropped_bytes_total \(s.salvageDroppedBytes)
        # HELP apitrace_collector_uploads_busy Uploads answered 503 with Retry-After because the collector was full, by bound (preempted: a slow upload whose slot went to another; shutting_down: received after SIGTERM, not stored).
        # TYPE apitrace_collector_uploads_busy counter

        """
        let (busy, timedOut) = counts.withLock { ($0.busy, $0.timedOut) }
        for reason in BusyReason.allCases {
            text += "apitrace_collector_uploads_busy_total{bound=\"\(reason.rawValue)\"} \(busy[reason] ?? 0)\n"
        }
        text += """
        # HELP apitrace_collector_connections_timed_out Connections closed for missing a deadline, by phase (idle: no request came).
        # TYPE apitrace_collector_connections_timed_out counter

        """
        for phase in UploadDeadlineHandler.TimedOutPhase.allCases {
            text += "apitrace_collector_connections_timed_out_total{phase=\"\(phase.rawValue)\"} \(timedOut[phase] ?? 0)\n"
        }
        text += forwarding?.text() ?? ""
        let usage = inFlight()
        text += """
        # HELP apitrace_collector_uploads_in_flight Uploads being read or stored now.
        # TYPE apitrace_collector_uploads_in_flight gauge
        apitrace_collector_uploads_in_flight \(usage.uploads)
        # HELP apitrace_collector_in_flight_bytes Body bytes held by uploads in progress now.
        # TYPE apitrace_collector_in_flight_bytes gauge
        # UNIT apitrace_collector_in_flight_bytes bytes
        apitrace_collector_in_flight_bytes \(usage.bytes)
        # EOF

        """
        return text
    }
}
