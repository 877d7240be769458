extension TraceEvent {
    /// Events a producer had to drop (`"type":"dropped"`), written by the producer itself.
    public struct Dropped: Sendable, Equatable {
        /// Number of events lost (`count`).
        public var count: Int
        /// Why: `buffer_full`, `write_failed`, `budget`, `rate_limited`, `sampled_out` or another reason (`reason`).
        public var reason: String

        /// Creates a dropped-events record.
        public init(count: Int, reason: String) {
            self.count = count
            self.reason = reason
        }
    }
}
