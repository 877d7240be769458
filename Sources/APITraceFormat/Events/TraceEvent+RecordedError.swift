extension TraceEvent {
    /// An error recorded with `recordError(_:userInfo:)` (`"type":"error"`).
    public struct RecordedError: Sendable, Equatable {
        /// Stable identity: `Type.case` for Swift enums, `domain#code` for `NSError` (`identity`).
        public var identity: String
        /// Human-readable description (`message`).
        public var message: String
        /// Extra context as strings (`user_info`).
        public var userInfo: [String: String]
        /// Identities of the underlying errors, outermost first (`underlying`).
        public var underlying: [String]
        /// Route the error relates to, when known (`route`).
        public var route: String?
        /// Source file that recorded the error (`file`).
        public var file: String?
        /// Source line that recorded the error (`line`).
        public var line: Int?
        /// Errors of the same identity suppressed by rate limiting since the last one written (`suppressed`).
        public var suppressed: Int?

        /// Creates a recorded error.
        public init(
            identity: String, message: String, userInfo: [String: String] = [:], underlying: [String] = [],
            route: String? = nil, file: String? = nil, line: Int? = nil, suppressed: Int? = nil
        ) {
            self.identity = identity
            self.message = message
            self.userInfo = userInfo
            self.underlying = underlying
            self.route = route
            self.file = file
            self.line = line
            self.suppressed = suppressed
        }
    }
}
