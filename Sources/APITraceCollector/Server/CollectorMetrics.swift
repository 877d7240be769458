import Foundation

/// The collector's own counters, exported at `GET /metrics` in the OpenMetrics text format.
public final class CollectorMetrics: @unchecked Sendable {
    private let lock = NSLock()
    private var accepted = 0
    private var duplicates = 0
    private var rejected: [UploadRejection.Reason: Int] = [:]
    private var receivedBytes = 0
    private var storedBytes = 0

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
    }

    /// Creates zeroed counters.
    public init() {}

    func recordAccepted(bytes: Int) { lock.withLock { accepted += 1; storedBytes += bytes } }
    func recordDuplicate() { lock.withLock { duplicates += 1 } }
    func recordRejected(_ reason: UploadRejection.Reason) { lock.withLock { rejected[reason, default: 0] += 1 } }
    func recordReceived(bytes: Int) { lock.withLock { receivedBytes += bytes } }

    /// The counters now.
    public var snapshot: Snapshot {
        lock.withLock {
            Snapshot(accepted: accepted, duplicates: duplicates, rejected: rejected, receivedBytes: receivedBytes, storedBytes: storedBytes)
        }
    }

    /// The media type of ``openMetricsText``.
    public static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// The counters in the OpenMetrics text format (which Prometheus scrapes), every reason listed even at 0.
    public var openMetricsText: String {
        let s = snapshot
        var text = """
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
        # EOF

        """
        return text
    }
}
