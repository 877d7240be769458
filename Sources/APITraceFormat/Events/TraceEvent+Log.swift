extension TraceEvent {
    /// A log line (`"type":"log"`).
    public struct Log: Sendable, Equatable {
        /// Level name: `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical` (`level`).
        public var level: String
        /// The message (`message`).
        public var message: String
        /// Metadata as strings (`metadata`).
        public var metadata: [String: String]
        /// Where the line came from, such as a logger label (`source`).
        public var source: String?

        /// Creates a log record.
        public init(level: String, message: String, metadata: [String: String] = [:], source: String? = nil) {
            self.level = level
            self.message = message
            self.metadata = metadata
            self.source = source
        }
    }
}
