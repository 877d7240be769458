import APITraceFormat

/// WebSocket connections (`websocket` events): opens, closes and how they ended, reconnects,
/// give-ups, time connected and traffic.
///
/// Every count is an integer (durations summed in whole milliseconds), so summaries merge to the
/// same result in any order: the cached and the uncached report agree byte for byte. Keys taken
/// from the file (reasons, routes, codes) are bounded; past the bound they share `(other)`.
public struct WebSocketSummary: Sendable {
    /// `open` events: handshakes that succeeded.
    public var opens = 0
    /// `close` events: every end of a connection and every failed attempt.
    public var closes = 0
    /// `close` events without message counts: attempts that never opened (refused, unreachable).
    public var failedAttempts = 0
    /// `close` events other than a normal (1000) or going-away (1001) close
    /// (`TraceEvent.WebSocket.isAbnormalClose(code:)`), failed attempts included.
    public var abnormalCloses = 0
    /// `reconnect` events.
    public var reconnects = 0
    /// `fail` events: the client gave up.
    public var fails = 0
    /// Abnormal closes by code, keyed `1006 abnormal` (the class is derived from the code, never read
    /// from the file; `- none` without a code).
    public var abnormalCodes: [String: Int] = [:]
    /// Abnormal closes and give-ups by the `reason` the producer wrote (`ping_timeout`, `refused`...).
    public var abnormalReasons: [String: Int] = [:]
    /// Time connected: `duration_ms` of the closes that ended a connection, summed in whole milliseconds.
    public var connectedMilliseconds: Int64 = 0
    /// How long connections stayed open (`duration_ms` of closes that ended a connection), in milliseconds.
    public var connectionDuration = QuantileSketch()
    /// Messages received and sent, summed over the closes.
    public var messagesIn: Int64 = 0, messagesOut: Int64 = 0
    /// Payload bytes received and sent, summed over the closes.
    public var bytesIn: Int64 = 0, bytesOut: Int64 = 0
    /// Reconnect delays (`delay_ms` of `reconnect`), in milliseconds.
    public var reconnectDelay = QuantileSketch()
    /// The longest silence of any connection (`silence_ms`), in whole milliseconds (-1: none seen).
    public var longestSilenceMilliseconds: Int64 = -1
    /// Per endpoint route (at most ``TraceSummary/maximumKeys``, then `(other)`).
    public var routes: [String: WebSocketRouteCounts] = [:]

    /// Creates an empty summary.
    public init() {}

    /// True when no `websocket` event was counted.
    public var isEmpty: Bool { opens + closes + reconnects + fails == 0 }

    /// The key of ``abnormalCodes`` for a code: the number and its class.
    static func codeKey(_ code: Int?) -> String {
        guard let code else { return "- none" }
        return "\(code) \(TraceEvent.WebSocket.reasonClass(ofCode: code))"
    }

    /// Adds another summary.
    public mutating func merge(_ other: WebSocketSummary) {
        opens = opens.addingSaturated(other.opens)
        closes = closes.addingSaturated(other.closes)
        failedAttempts = failedAttempts.addingSaturated(other.failedAttempts)
        abnormalCloses = abnormalCloses.addingSaturated(other.abnormalCloses)
        reconnects = reconnects.addingSaturated(other.reconnects)
        fails = fails.addingSaturated(other.fails)
        Self.mergeInOrder(&abnormalCodes, other.abnormalCodes, limit: [String: Int].boundedKeyLimit)
        Self.mergeInOrder(&abnormalReasons, other.abnormalReasons, limit: [String: Int].boundedKeyLimit)
        connectedMilliseconds = connectedMilliseconds.addingSaturated(other.connectedMilliseconds)
        connectionDuration.merge(other.connectionDuration)
        messagesIn = messagesIn.addingSaturated(other.messagesIn)
        messagesOut = messagesOut.addingSaturated(other.messagesOut)
        bytesIn = bytesIn.addingSaturated(other.bytesIn)
        bytesOut = bytesOut.addingSaturated(other.bytesOut)
        reconnectDelay.merge(other.reconnectDelay)
        longestSilenceMilliseconds = max(longestSilenceMilliseconds, other.longestSilenceMilliseconds)
        // Past the cap, new keys are taken in sorted order, so which fold into `(other)` does not
        // depend on hashing (the cached and the uncached report must agree).
        let fits = routes.count + other.routes.count <= TraceSummary.maximumKeys
        for (route, counts) in fits ? Array(other.routes) : other.routes.sorted(by: { $0.key < $1.key }) {
            let key = routes[route] != nil || routes.count < TraceSummary.maximumKeys - 1 ? route : "(other)"
            routes[key, default: WebSocketRouteCounts()].merge(counts)
        }
    }

    /// ``Dictionary/addBounded(_:_:limit:)`` of every count, in key order once the limit is near.
    static func mergeInOrder(_ counts: inout [String: Int], _ other: [String: Int], limit: Int) {
        let fits = counts.count + other.count < limit
        for (key, n) in fits ? Array(other) : other.sorted(by: { $0.key < $1.key }) {
            counts.addBounded(key, n, limit: limit)
        }
    }
}

/// WebSocket counts of one endpoint route.
public struct WebSocketRouteCounts: Sendable, Equatable {
    /// Connections opened.
    public var opens = 0
    /// Closes (connection ends and failed attempts).
    public var closes = 0
    /// Abnormal closes.
    public var abnormalCloses = 0
    /// Reconnects.
    public var reconnects = 0
    /// Give-ups.
    public var fails = 0
    /// Messages received.
    public var messagesIn: Int64 = 0

    /// Creates zero counts.
    public init() {}

    /// Adds another route's counts.
    public mutating func merge(_ other: WebSocketRouteCounts) {
        opens = opens.addingSaturated(other.opens)
        closes = closes.addingSaturated(other.closes)
        abnormalCloses = abnormalCloses.addingSaturated(other.abnormalCloses)
        reconnects = reconnects.addingSaturated(other.reconnects)
        fails = fails.addingSaturated(other.fails)
        messagesIn = messagesIn.addingSaturated(other.messagesIn)
    }
}
