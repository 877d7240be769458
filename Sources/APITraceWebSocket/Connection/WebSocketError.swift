/// Why a ``WebSocketConnection`` stopped for good, or why a call on it failed.
///
/// Messages name the URL without its query (queries may carry tokens); header values never appear.
public struct WebSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; new kinds may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case refused, messageTooLarge = "message_too_big", closedByPolicy = "policy", notConnected = "not_connected"
            case closed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The server could not be reached or refused the handshake, attempt after attempt.
        public static let refused = Code(.refused)
        /// The server sent a message or frame over the configured limit; the client closed with 1009.
        public static let messageTooLarge = Code(.messageTooLarge)
        /// The server closed with a code the reconnect policy does not retry (1008, 4xxx, protocol errors).
        public static let closedByPolicy = Code(.closedByPolicy)
        /// A send or ping while no connection is open.
        public static let notConnected = Code(.notConnected)
        /// A send or ping after ``WebSocketConnection/close(code:reason:)``.
        public static let closed = Code(.closed)

        /// The trace `reason` spelling of this code.
        public var description: String { value.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// The URL without query, fragment or credentials.
    public var url: String
    /// The last close code seen, if any.
    public var closeCode: Int?
    /// The limit in bytes, for ``Code/messageTooLarge``.
    public var limit: Int?
    /// Connection attempts made, for ``Code/refused``.
    public var attempts: Int?
    /// HTTP status of the refused handshake, when the transport reports it.
    public var status: Int?

    /// Creates an error.
    public init(code: Code, url: String, closeCode: Int? = nil, limit: Int? = nil, attempts: Int? = nil, status: Int? = nil) {
        self.code = code
        self.url = url
        self.closeCode = closeCode
        self.limit = limit
        self.attempts = attempts
        self.status = status
    }

    public var description: String {
        switch code {
        case .refused:
            let statusText = status.map { " (HTTP \($0))" } ?? ""
            return "\(url): the server refused or could not be reached\(statusText) after \(attempts ?? 1) attempts. "
                + "Check the URL, the credentials and that the server speaks WebSocket."
        case .messageTooLarge:
            return "\(url): the server sent a message over the limit of \(limit ?? 0) bytes; the connection was "
                + "closed with 1009. Raise WebSocketConnection.Configuration.maximumMessageSize if the server means it."
        case .closedByPolicy:
            return "\(url): the server closed with code \(closeCode ?? 0), which the reconnect policy does not retry."
        case .notConnected:
            return "\(url): no connection is open; wait for the connected event before sending."
        default:
            return "\(url): the connection was closed by the app."
        }
    }
}
