public import APITraceExport
public import Foundation

extension TraceCollector {
    /// Where a ``TraceCollector`` stores uploads, whom it accepts them from, how big they may be,
    /// and how much of the machine uploads in progress may take.
    public struct Configuration: Sendable {
        /// Folder the uploads are stored under, in `dt=YYYY-MM-DD/` subfolders. Created when missing.
        public var directory: String
        /// Bearer tokens accepted in `Authorization: Bearer <token>`; any one of them will do.
        public var tokens: [String]
        /// Largest request body (compressed trace file) accepted, in bytes; larger ones get 413. Default 64 MiB.
        public var maxBodyBytes: Int
        /// Largest decompressed size accepted, in bytes; a body inflating past it (a gzip bomb) gets 413. Default 1 GiB.
        public var maxDecompressedBytes: Int
        /// Largest ratio of decompressed to compressed bytes accepted; a body inflating further
        /// (a gzip bomb) gets 413 as soon as its output passes this many times the compressed bytes
        /// read so far, plus 1 MiB. Default 200: gzip makes 8x of trace lines and about 50x of lines
        /// differing only in their timestamps, 1,000x of a run of one byte.
        public var maxDecompressionRatio: Int
        /// Most uploads read or processed at once; past it, `503` with `Retry-After`. Default 64.
        public var maxConcurrentUploads: Int
        /// Most body bytes all uploads in progress may hold together; past it, `503` with `Retry-After`.
        /// Default 256 MiB. With ``maxConcurrentUploads`` this bounds the collector's memory: see `Docs/collection.md`.
        public var maxBytesInFlight: Int
        /// `Retry-After` sent with a `503` when the collector is full, in seconds. Default 5.
        public var busyRetryAfterSeconds: Int
        /// A request head must be complete this long after the connection opens or the previous
        /// response ends; otherwise the connection is closed. Default 10 s.
        public var headerTimeout: Duration
        /// A body that brings no byte for this long is cut off (connection closed). Default 15 s.
        public var bodyIdleTimeout: Duration
        /// Least a body must bring per second, averaged over each ``bodyRateWindow``; a slower
        /// body is cut off (connection closed), so dribbling clients cannot hold upload slots.
        /// Default 1 KiB/s (a 2G link brings ten times as much); 0 turns the check off.
        public var minBodyBytesPerSecond: Int
        /// The window over which ``minBodyBytesPerSecond`` is measured. Default 10 s.
        public var bodyRateWindow: Duration
        /// On SIGTERM, how long a body still arriving may take to finish before its connection is
        /// closed; uploads whose body is in are stored and answered. Default 2 s.
        public var shutdownGrace: Duration
        /// A whole body must arrive within this long after its head. Default 5 minutes.
        public var bodyTimeout: Duration
        /// Threads that inflate, hash and store uploads; at most this many run at once. Default: the core count.
        public var storeThreads: Int
        /// Count the events of every stored file into `/metrics` (requests, durations, decode
        /// failures, recorded errors, SSE changes, dropped events). Default on; off saves reading
        /// each stored file once more.
        public var ingestMetrics: Bool
        /// How many routes and error identities get series of their own on `/metrics`; the rest are `(other)`.
        public var metricLimits: OpenMetricsExporter.Limits
        /// Forward what is stored to an OTLP endpoint, off the request path (a bounded spool in
        /// `.otlp-spool/`); nil (the default) forwards nothing.
        public var otlpForwarding: OTLPForwarding? = nil
        /// This collector's name in the store (1 to 64 letters, digits, `.`, `_`, `-`), unique among the
        /// collectors running on it: its ingest counters are kept in `.collectors/<id>/` and survive a
        /// restart, a crash or a SIGKILL (``ingestMetrics`` on). nil (the default): counters live as long as the process.
        public var instanceID: String? = nil

        /// Creates a configuration with the defaults above.
        public init(
            directory: String,
            tokens: [String],
            maxBodyBytes: Int = 64 << 20,
            maxDecompressedBytes: Int = 1 << 30,
            maxDecompressionRatio: Int = 200,
            maxConcurrentUploads: Int = 64,
            maxBytesInFlight: Int = 256 << 20,
            busyRetryAfterSeconds: Int = 5,
            headerTimeout: Duration = .seconds(10),
            bodyIdleTimeout: Duration = .seconds(15),
            minBodyBytesPerSecond: Int = 1024,
            bodyRateWindow: Duration = .seconds(10),
            shutdownGrace: Duration = .seconds(2),
            bodyTimeout: Duration = .seconds(300),
            storeThreads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount),
            ingestMetrics: Bool = true,
            metricLimits: OpenMetricsExporter.Limits = .init()
        ) {
            self.directory = directory
            self.tokens = tokens
            self.maxBodyBytes = maxBodyBytes
            self.maxDecompressedBytes = maxDecompressedBytes
            self.maxDecompressionRatio = maxDecompressionRatio
            self.maxConcurrentUploads = maxConcurrentUploads
            self.maxBytesInFlight = maxBytesInFlight
            self.busyRetryAfterSeconds = busyRetryAfterSeconds
            self.headerTimeout = headerTimeout
            self.bodyIdleTimeout = bodyIdleTimeout
            self.minBodyBytesPerSecond = minBodyBytesPerSecond
            self.bodyRateWindow = bodyRateWindow
            self.shutdownGrace = shutdownGrace
            self.bodyTimeout = bodyTimeout
            self.storeThreads = storeThreads
            self.ingestMetrics = ingestMetrics
            self.metricLimits = metricLimits
        }
    }
}
