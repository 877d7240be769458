import APITraceExport
import Foundation

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

        /// Creates a configuration with the defaults above.
        public init(
            directory: String,
            tokens: [String],
            maxBodyBytes: Int = 64 << 20,
            maxDecompressedBytes: Int = 1 << 30,
            maxConcurrentUploads: Int = 64,
            maxBytesInFlight: Int = 256 << 20,
            busyRetryAfterSeconds: Int = 5,
            headerTimeout: Duration = .seconds(10),
            bodyIdleTimeout: Duration = .seconds(15),
            bodyTimeout: Duration = .seconds(300),
            storeThreads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount),
            ingestMetrics: Bool = true,
            metricLimits: OpenMetricsExporter.Limits = .init()
        ) {
            self.directory = directory
            self.tokens = tokens
            self.maxBodyBytes = maxBodyBytes
            self.maxDecompressedBytes = maxDecompressedBytes
            self.maxConcurrentUploads = maxConcurrentUploads
            self.maxBytesInFlight = maxBytesInFlight
            self.busyRetryAfterSeconds = busyRetryAfterSeconds
            self.headerTimeout = headerTimeout
            self.bodyIdleTimeout = bodyIdleTimeout
            self.bodyTimeout = bodyTimeout
            self.storeThreads = storeThreads
            self.ingestMetrics = ingestMetrics
            self.metricLimits = metricLimits
        }
    }
}
