extension TraceEvent {
    /// A Server-Sent Events connection changing state (`"type":"sse"`).
    public struct SSE: Sendable, Equatable {
        /// What happened (`phase`).
        public var phase: Phase
        /// Route of the stream (`route`).
        public var route: String
        /// Connection attempt, 1 for the first (`attempt`).
        public var attempt: Int?
        /// Delay before the reconnect, in milliseconds (`delay_ms`).
        public var delayMs: Double?
        /// Last event id sent or to be sent as `Last-Event-ID` (`last_event_id`).
        public var lastEventID: String?
        /// Why a connection closed or failed, such as `end_of_stream`, `network_error`, `idle_timeout`, `http_status` (`reason`).
        public var reason: String?
        /// HTTP status of the response, when there was one (`status`).
        public var status: Int?
        /// Events received on the connection that closed (`events`).
        public var events: Int?
        /// For `open`: time to open; for `close`: how long the connection was open; in milliseconds (`duration_ms`).
        public var durationMs: Double?

        /// Creates an SSE record.
        public init(
            phase: Phase, route: String, attempt: Int? = nil, delayMs: Double? = nil, lastEventID: String? = nil,
            reason: String? = nil, status: Int? = nil, events: Int? = nil, durationMs: Double? = nil
        ) {
            self.phase = phase
            self.route = route
            self.attempt = attempt
            self.delayMs = delayMs
            self.lastEventID = lastEventID
            self.reason = reason
            self.status = status
            self.events = events
            self.durationMs = durationMs
        }

        /// The lifecycle phase. Unknown phases written by newer producers are kept as they are.
        public struct Phase: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// The connection opened (status 200, `text/event-stream`).
            public static let open = Phase(rawValue: "open")
            /// The connection closed.
            public static let close = Phase(rawValue: "close")
            /// The client is about to reconnect after `delay_ms`.
            public static let reconnect = Phase(rawValue: "reconnect")
            /// The client gave up for good.
            public static let fail = Phase(rawValue: "fail")
        }
    }
}
