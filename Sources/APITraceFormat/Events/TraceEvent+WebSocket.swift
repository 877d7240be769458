extension TraceEvent {
    /// A WebSocket connection changing state (`"type":"websocket"`).
    ///
    /// One `open` when the handshake succeeds, one `close` for every end of a connection (with its
    /// close code, the class of its reason and who closed it), one `reconnect` before each new
    /// attempt and one `fail` when the client gives up. Message content and the peer's close reason
    /// text are never recorded: only counts, sizes and times.
    public struct WebSocket: Sendable, Equatable {
        /// What happened (`phase`).
        public var phase: Phase
        /// Route of the endpoint (`route`).
        public var route: String
        /// Connection attempt, 1 for the first (`attempt`).
        public var attempt: Int?
        /// The close code: the one in the close frame, 1006 when the connection ended without one (`code`).
        public var code: Int?
        /// The class of the reason, such as `normal`, `going_away`, `abnormal`, `ping_timeout`,
        /// `server_error`, `policy`, `message_too_big`, `refused`, `network_error` (`reason`).
        public var reason: String?
        /// Who ended the connection: `client`, `server` or `network` (no close frame) (`closed_by`).
        public var closedBy: String?
        /// HTTP status of a refused handshake, when the transport reports it (`status`).
        public var status: Int?
        /// Delay before the reconnect, in milliseconds (`delay_ms`).
        public var delayMs: Double?
        /// For `open`: time to open; for `close`: how long the connection was open; in milliseconds (`duration_ms`).
        public var durationMs: Double?
        /// Messages received on the connection (`messages_in`).
        public var messagesIn: Int?
        /// Messages sent on the connection (`messages_out`).
        public var messagesOut: Int?
        /// Payload bytes received (`bytes_in`).
        public var bytesIn: Int64?
        /// Payload bytes sent (`bytes_out`).
        public var bytesOut: Int64?
        /// Ping round trips completed (`pings`).
        public var pings: Int?
        /// Mean ping round trip, in milliseconds (`ping_rtt_ms`).
        public var pingRTTMs: Double?
        /// Longest time without any frame from the peer while connected, in milliseconds (`silence_ms`).
        public var silenceMs: Double?

        /// Creates a WebSocket record.
        public init(
            phase: Phase, route: String, attempt: Int? = nil, code: Int? = nil, reason: String? = nil,
            closedBy: String? = nil, status: Int? = nil, delayMs: Double? = nil, durationMs: Double? = nil,
            messagesIn: Int? = nil, messagesOut: Int? = nil, bytesIn: Int64? = nil, bytesOut: Int64? = nil,
            pings: Int? = nil, pingRTTMs: Double? = nil, silenceMs: Double? = nil
        ) {
            self.phase = phase
            self.route = route
            self.attempt = attempt
            self.code = code
            self.reason = reason
            self.closedBy = closedBy
            self.status = status
            self.delayMs = delayMs
            self.durationMs = durationMs
            self.messagesIn = messagesIn
            self.messagesOut = messagesOut
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.pings = pings
            self.pingRTTMs = pingRTTMs
            self.silenceMs = silenceMs
        }

        /// The lifecycle phase; the same four as `sse`. Unknown phases written by newer producers are kept.
        public struct Phase: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// The handshake succeeded.
            public static let open = Phase(rawValue: "open")
            /// A connection ended (or an attempt was refused).
            public static let close = Phase(rawValue: "close")
            /// The client is about to reconnect after `delay_ms`.
            public static let reconnect = Phase(rawValue: "reconnect")
            /// The client gave up for good.
            public static let fail = Phase(rawValue: "fail")
        }
    }
}
