extension ServerSentEventParser {
    /// How much of one line and one event the parser holds before it gives up on the stream.
    ///
    /// Without limits a server that streams one endless `data:` line, or `data:` lines that never end
    /// an event, makes the client buffer until it runs out of memory. With them the parser stops at
    /// the first line or event past its limit and reports ``LimitExceeded``; ``EventSource`` then drops
    /// the connection and reconnects with backoff.
    ///
    /// ```swift
    /// var limits = ServerSentEventParser.Limits()
    /// limits.maximumEventBytes = 32 << 20   // events of up to 32 MiB
    /// ```
    public struct Limits: Sendable, Hashable {
        /// Longest line, in bytes without its line end (a `data:` line counts its field name too).
        /// Default 1 MiB.
        public var maximumLineBytes: Int
        /// Largest event, in bytes of its data (the `data` values joined with line feeds, as
        /// ``ServerSentEvent/data`` holds them before invalid UTF-8 is replaced). Default 4 MiB.
        public var maximumEventBytes: Int

        /// Creates limits; the defaults fit any sensible event stream and keep a client's memory in
        /// the megabytes whatever the server sends.
        public init(maximumLineBytes: Int = 1 << 20, maximumEventBytes: Int = 4 << 20) {
            self.maximumLineBytes = max(0, maximumLineBytes)
            self.maximumEventBytes = max(0, maximumEventBytes)
        }
    }

    /// The stream broke a ``Limits`` bound: the parser ignores the rest of the stream until
    /// ``ServerSentEventParser/finishStream()``.
    public struct LimitExceeded: Error, Sendable, Hashable, CustomStringConvertible {
        /// Which bound was broken.
        public struct Kind: Sendable, Hashable, CustomStringConvertible {
            private enum Value: String, Sendable, Hashable { case line = "line_too_long", event = "event_too_large" }
            private let value: Value
            private init(_ value: Value) { self.value = value }

            /// A line longer than ``Limits/maximumLineBytes``.
            public static let lineTooLong = Kind(.line)
            /// An event whose data grew past ``Limits/maximumEventBytes``.
            public static let eventTooLarge = Kind(.event)

            /// The trace `reason`: `line_too_long` or `event_too_large`.
            public var description: String { value.rawValue }
        }

        /// Which bound was broken.
        public var kind: Kind
        /// The bound, in bytes.
        public var limit: Int

        /// Creates the error.
        public init(kind: Kind, limit: Int) {
            self.kind = kind
            self.limit = limit
        }

        public var description: String {
            kind == .lineTooLong
                ? "the stream sent a line longer than \(limit) bytes"
                : "the stream sent an event with more than \(limit) bytes of data"
        }
    }
}
