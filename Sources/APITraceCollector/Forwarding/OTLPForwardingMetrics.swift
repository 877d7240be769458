import APITraceFormat

/// The forwarder's counters, served on the collector's `/metrics` after its own.
public final class OTLPForwardingMetrics: Sendable {
    /// Why spooled (or to-be-spooled) uploads were given up.
    public enum DropReason: String, CaseIterable, Sendable {
        /// A bound of the spool was reached: the oldest upload went (or one larger than the whole spool).
        case spoolFull = "spool_full"
        /// The copy into the spool could not be written (disk full...).
        case spoolWriteFailed = "spool_write_failed"
        /// The endpoint refused it with a status retrying will not change (400, 413...).
        case rejected
    }

    /// A snapshot of the counters.
    public struct Snapshot: Sendable, Equatable {
        /// Uploads copied into the spool, and their bytes.
        public var spooled = 0
        public var spooledBytes = 0
        /// Uploads whose every span and log record the endpoint accepted.
        public var forwarded = 0
        /// Spans and log records accepted by the endpoint.
        public var spans = 0
        public var logs = 0
        /// OTLP requests accepted.
        public var requests = 0
        /// Requests sent again (after a refusal worth retrying, a timeout or a network error).
        public var retries = 0
        /// Uploads given up, by reason, and their bytes.
        public var dropped: [DropReason: Int] = [:]
        public var droppedBytes = 0
        /// What the spool holds now.
        public var spoolBytes = 0
        public var spoolFiles = 0
    }

    private let counts = Locked(Snapshot())
    /// The spool's usage, read at each scrape.
    private let usage: Locked<(@Sendable () -> (bytes: Int, files: Int))?> = Locked(nil)

    init() {}

    func attach(usage: @escaping @Sendable () -> (bytes: Int, files: Int)) { self.usage.withLock { $0 = usage } }

    func recordSpooled(bytes: Int) { counts.withLock { $0.spooled += 1; $0.spooledBytes += bytes } }
    func recordDropped(_ reason: DropReason, bytes: Int) { counts.withLock { $0.dropped[reason, default: 0] += 1; $0.droppedBytes += bytes } }
    func recordForwarded() { counts.withLock { $0.forwarded += 1 } }
    func recordRetry(_ n: Int = 1) { if n > 0 { counts.withLock { $0.retries += n } } }
    func recordAccepted(spans: Int, logs: Int) { counts.withLock { $0.spans += spans; $0.logs += logs } }
    func recordRequest() { counts.withLock { $0.requests += 1 } }

    /// The counters now.
    public var snapshot: Snapshot {
        var snapshot = counts.withLock { $0 }
        if let now = usage.withLock({ $0 })?() {
            snapshot.spoolBytes = now.bytes
            snapshot.spoolFiles = now.files
        }
        return snapshot
    }

    /// The families in the OpenMetrics text format (no `# EOF`).
    func text() -> String {
        let s = snapshot
        var text = """
        # HELP apitrace_collector_otlp_spooled Uploads copied into the OTLP spool to be forwarded.
        # TYPE apitrace_collector_otlp_spooled counter
        apitrace_collector_otlp_spooled_total \(s.spooled)
        # HELP apitrace_collector_otlp_spooled_bytes Bytes of the uploads copied into the OTLP spool.
        # TYPE apitrace_collector_otlp_spooled_bytes counter
        # UNIT apitrace_collector_otlp_spooled_bytes bytes
        apitrace_collector_otlp_spooled_bytes_total \(s.spooledBytes)
        # HELP apitrace_collector_otlp_forwarded Uploads whose every span and log record the OTLP endpoint accepted.
        # TYPE apitrace_collector_otlp_forwarded counter
        apitrace_collector_otlp_forwarded_total \(s.forwarded)
        # HELP apitrace_collector_otlp_sent Spans (traces) and log records (logs) the OTLP endpoint accepted.
        # TYPE apitrace_collector_otlp_sent counter
        apitrace_collector_otlp_sent_total{signal="traces"} \(s.spans)
        apitrace_collector_otlp_sent_total{signal="logs"} \(s.logs)
        # HELP apitrace_collector_otlp_requests OTLP requests the endpoint accepted.
        # TYPE apitrace_collector_otlp_requests counter
        apitrace_collector_otlp_requests_total \(s.requests)
        # HELP apitrace_collector_otlp_retries OTLP requests sent again (429/502/503/504, timeouts, network errors).
        # TYPE apitrace_collector_otlp_retries counter
        apitrace_collector_otlp_retries_total \(s.retries)
        # HELP apitrace_collector_otlp_dropped Uploads given up without being forwarded whole, by reason.
        # TYPE apitrace_collector_otlp_dropped counter

        """
        for reason in DropReason.allCases {
            text += "apitrace_collector_otlp_dropped_total{reason=\"\(reason.rawValue)\"} \(s.dropped[reason] ?? 0)\n"
        }
        text += """
        # HELP apitrace_collector_otlp_dropped_bytes Bytes of the uploads given up.
        # TYPE apitrace_collector_otlp_dropped_bytes counter
        # UNIT apitrace_collector_otlp_dropped_bytes bytes
        apitrace_collector_otlp_dropped_bytes_total \(s.droppedBytes)
        # HELP apitrace_collector_otlp_spool_bytes Bytes waiting in the OTLP spool.
        # TYPE apitrace_collector_otlp_spool_bytes gauge
        # UNIT apitrace_collector_otlp_spool_bytes bytes
        apitrace_collector_otlp_spool_bytes \(s.spoolBytes)
        # HELP apitrace_collector_otlp_spool_files Uploads waiting in the OTLP spool.
        # TYPE apitrace_collector_otlp_spool_files gauge
        apitrace_collector_otlp_spool_files \(s.spoolFiles)

        """
        return text
    }
}
