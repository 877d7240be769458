extension TraceCollector {
    /// Where a ``TraceCollector`` stores uploads, whom it accepts them from, and how big they may be.
    public struct Configuration: Sendable {
        /// Folder the uploads are stored under, in `dt=YYYY-MM-DD/` subfolders. Created when missing.
        public var directory: String
        /// Bearer tokens accepted in `Authorization: Bearer <token>`; any one of them will do.
        public var tokens: [String]
        /// Largest request body (compressed trace file) accepted, in bytes; larger ones get 413. Default 64 MiB.
        public var maxBodyBytes: Int
        /// Largest decompressed size accepted, in bytes; a body inflating past it (a gzip bomb) gets 413. Default 1 GiB.
        public var maxDecompressedBytes: Int

        /// Creates a configuration with the defaults above.
        public init(
            directory: String,
            tokens: [String],
            maxBodyBytes: Int = 64 << 20,
            maxDecompressedBytes: Int = 1 << 30
        ) {
            self.directory = directory
            self.tokens = tokens
            self.maxBodyBytes = maxBodyBytes
            self.maxDecompressedBytes = maxDecompressedBytes
        }
    }
}
