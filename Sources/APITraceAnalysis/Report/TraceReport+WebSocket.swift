import APITraceFormat

extension TraceReport {
    /// WebSocket connections, as every format prints them.
    public struct WebSocketSection: Sendable {
        /// Connections opened (handshakes that succeeded).
        public var connections: Int
        /// Closes: every end of a connection and every failed attempt.
        public var closes: Int
        /// Closes of attempts that never opened (refused, unreachable).
        public var failedAttempts: Int
        /// Closes other than normal (1000) or going away (1001).
        public var abnormalCloses: Int
        /// Abnormal closes per close (0 without closes).
        public var abnormalShare: Double
        /// Reconnects.
        public var reconnects: Int
        /// Reconnects per hour of the report's span (`nil` for a span under a minute).
        public var reconnectsPerHour: Double?
        /// Give-ups.
        public var fails: Int
        /// Abnormal closes by code and its class (`1006 abnormal`), most first.
        public var abnormalByCode: [(code: String, count: Int)]
        /// Abnormal closes and give-ups by the reason the producer wrote, most first.
        public var abnormalByReason: [(reason: String, count: Int)]
        /// Total time connected, in milliseconds.
        public var connectedMilliseconds: Int64
        /// How long connections stayed open, in milliseconds.
        public var connectionDuration: Percentiles
        /// Messages received and sent.
        public var messagesIn, messagesOut: Int64
        /// Payload bytes received and sent.
        public var bytesIn, bytesOut: Int64
        /// Reconnect delay percentiles in milliseconds.
        public var reconnectDelay: Percentiles
        /// The longest silence of a connection, in milliseconds.
        public var longestSilenceMilliseconds: Int64?
        /// Busiest endpoint routes (by connections, then closes), at most ``maximumRoutesListed``.
        public var routes: [(route: String, counts: WebSocketRouteCounts)]
        /// Routes not listed.
        public var routesOmitted: Int

        /// Most routes listed.
        public static let maximumRoutesListed = 20

        /// True when no `websocket` event was counted.
        public var isEmpty: Bool { connections + closes + reconnects + fails == 0 }

        init(_ s: WebSocketSummary, spanSeconds span: Double) {
            connections = s.opens
            closes = s.closes
            failedAttempts = s.failedAttempts
            abnormalCloses = s.abnormalCloses
            abnormalShare = s.closes > 0 ? Double(s.abnormalCloses) / Double(s.closes) : 0
            reconnects = s.reconnects
            reconnectsPerHour = span >= 60 ? Double(s.reconnects) / (span / 3600) : nil
            fails = s.fails
            abnormalByCode = TraceReport.ranked(s.abnormalCodes).map { ($0.route, $0.count) }
            abnormalByReason = TraceReport.ranked(s.abnormalReasons).map { ($0.route, $0.count) }
            connectedMilliseconds = s.connectedMilliseconds
            connectionDuration = Percentiles(s.connectionDuration)
            messagesIn = s.messagesIn
            messagesOut = s.messagesOut
            bytesIn = s.bytesIn
            bytesOut = s.bytesOut
            reconnectDelay = Percentiles(s.reconnectDelay)
            longestSilenceMilliseconds = s.longestSilenceMilliseconds >= 0 ? s.longestSilenceMilliseconds : nil
            let sorted = s.routes.sorted {
                ($0.value.opens, $0.value.closes, $1.key) > ($1.value.opens, $1.value.closes, $0.key)
            }
            routes = sorted.prefix(Self.maximumRoutesListed).map { ($0.key, $0.value) }
            routesOmitted = max(0, sorted.count - Self.maximumRoutesListed)
        }

        /// The headline as one line: `connections 12, closes 14 (2 failed attempts), abnormal 5 (35.7 %), ...`.
        var headline: String {
            typealias F = ReportNumberFormatting
            var line = "connections \(F.count(connections)), closes \(F.count(closes))"
            if failedAttempts > 0 { line += " (\(F.count(failedAttempts)) failed attempts)" }
            line += ", abnormal \(F.count(abnormalCloses)) (\(F.percent(abnormalShare)))"
            line += ", reconnects \(F.count(reconnects))"
            if let perHour = reconnectsPerHour { line += " (\(F.number(perHour)) per hour)" }
            return line + ", gave up \(F.count(fails))"
        }

        /// Time connected and traffic as one line.
        var trafficLine: String {
            typealias F = ReportNumberFormatting
            let d = connectionDuration
            return "time connected \(F.span(Double(connectedMilliseconds) / 1000)) in all; per connection p50 \(F.duration(d.p50)), "
                + "p95 \(F.duration(d.p95)), max \(F.duration(d.max)); messages in \(F.count(Int(clamping: messagesIn))), "
                + "out \(F.count(Int(clamping: messagesOut))); bytes in \(F.bytes(bytesIn)), out \(F.bytes(bytesOut))"
        }

        /// Reconnect delays and the longest silence as one line.
        var delayLine: String {
            typealias F = ReportNumberFormatting
            let d = reconnectDelay
            return "reconnect delay p50 \(F.duration(d.p50)), p95 \(F.duration(d.p95)); longest silence "
                + F.duration(longestSilenceMilliseconds.map(Double.init))
        }
    }
}

extension TraceReport {
    /// The `websocket` object of the JSON report.
    func webSocketJSON() -> ReportJSONValue {
        typealias J = ReportJSONValue
        let ws = webSocket
        func int(_ n: Int64) -> J { .int(Int(clamping: n)) }
        func percentiles(_ p: Percentiles) -> J {
            .object([("p50", .optional(p.p50)), ("p95", .optional(p.p95)), ("p99", .optional(p.p99)), ("max", .optional(p.max))])
        }
        return .object([
            ("connections", .int(ws.connections)),
            ("closes", .int(ws.closes)),
            ("failed_attempts", .int(ws.failedAttempts)),
            ("abnormal_closes", .int(ws.abnormalCloses)),
            ("abnormal_share", .double(ws.abnormalShare)),
            ("reconnects", .int(ws.reconnects)),
            ("reconnects_per_hour", .optional(ws.reconnectsPerHour)),
            ("fails", .int(ws.fails)),
            ("abnormal_by_code", .array(ws.abnormalByCode.map { .object([("code", .string($0.code)), ("count", .int($0.count))]) })),
            ("abnormal_by_reason", .array(ws.abnormalByReason.map { .object([("reason", .string($0.reason)), ("count", .int($0.count))]) })),
            ("connected_ms", int(ws.connectedMilliseconds)),
            ("connection_duration_ms", percentiles(ws.connectionDuration)),
            ("messages_in", int(ws.messagesIn)),
            ("messages_out", int(ws.messagesOut)),
            ("bytes_in", int(ws.bytesIn)),
            ("bytes_out", int(ws.bytesOut)),
            ("reconnect_delay_ms", percentiles(ws.reconnectDelay)),
            ("longest_silence_ms", ws.longestSilenceMilliseconds.map { int($0) } ?? .null),
            ("routes", .array(ws.routes.map { r in
                .object([
                    ("route", .string(r.route)), ("connections", .int(r.counts.opens)), ("closes", .int(r.counts.closes)),
                    ("abnormal_closes", .int(r.counts.abnormalCloses)), ("reconnects", .int(r.counts.reconnects)),
                    ("fails", .int(r.counts.fails)), ("messages_in", int(r.counts.messagesIn)),
                ])
            })),
            ("routes_omitted", .int(ws.routesOmitted)),
        ])
    }
}
