import APITraceFormat

extension TraceAggregator {
    /// What the aggregator counts of `websocket` events before ``summary()`` names its ids.
    struct WebSocketAccumulator {
        var summary = WebSocketSummary()
        /// Abnormal closes by code (`Int.min` without a code); at most 65,537 keys, as `code` is 0...65535.
        var codes: [Int: Int] = [:]
        /// Abnormal closes and give-ups by interned reason (the interner is bounded).
        var reasons: [Int: Int] = [:]
        /// Route id (-2: `(other)`) -> counts; routes are taken in file order up to the cap, so
        /// which ones fold into `(other)` does not depend on hashing.
        var routes: [Int: WebSocketRouteCounts] = [:]
    }

    /// One `websocket` event's facts, as both the line path and the event path read them.
    struct WebSocketFacts {
        var phase: SSEPhase
        var route: Int
        var code: Int?
        var reason: Int?
        var delayMs: Double?
        var durationMs: Double?
        var messagesIn: Int64?
        var messagesOut: Int64?
        var bytesIn: Int64?
        var bytesOut: Int64?
        var silenceMs: Double?
    }

    mutating func recordWebSocket(ms: Int64, _ e: WebSocketFacts) {
        countEvent(.websocket, ms: ms)
        let routeKey = webSocket.routes[e.route] != nil || webSocket.routes.count < TraceSummary.maximumKeys - 1 ? e.route : -2
        var route = webSocket.routes[routeKey] ?? WebSocketRouteCounts()
        defer { webSocket.routes[routeKey] = route }
        switch e.phase {
        case .open:
            webSocket.summary.opens += 1
            route.opens += 1
        case .close:
            webSocket.summary.closes += 1
            route.closes += 1
            if TraceEvent.WebSocket.isAbnormalClose(code: e.code) {
                webSocket.summary.abnormalCloses += 1
                route.abnormalCloses += 1
                webSocket.codes[e.code ?? Int.min, default: 0] += 1
                if let reason = e.reason { webSocket.reasons[reason, default: 0] += 1 }
            }
            // A close without message counts is an attempt that never opened: no time connected.
            if let messagesIn = e.messagesIn {
                if let durationMs = e.durationMs {
                    webSocket.summary.connectedMilliseconds = webSocket.summary.connectedMilliseconds
                        .addingSaturated(Int64(durationMs.rounded()))
                    webSocket.summary.connectionDuration.record(durationMs)
                }
                webSocket.summary.messagesIn = webSocket.summary.messagesIn.addingSaturated(messagesIn)
                route.messagesIn = route.messagesIn.addingSaturated(messagesIn)
            } else {
                webSocket.summary.failedAttempts += 1
            }
            webSocket.summary.messagesOut = webSocket.summary.messagesOut.addingSaturated(e.messagesOut ?? 0)
            webSocket.summary.bytesIn = webSocket.summary.bytesIn.addingSaturated(e.bytesIn ?? 0)
            webSocket.summary.bytesOut = webSocket.summary.bytesOut.addingSaturated(e.bytesOut ?? 0)
            if let silenceMs = e.silenceMs {
                webSocket.summary.longestSilenceMilliseconds = max(webSocket.summary.longestSilenceMilliseconds, Int64(silenceMs.rounded()))
            }
        case .reconnect:
            webSocket.summary.reconnects += 1
            route.reconnects += 1
            if let delayMs = e.delayMs { webSocket.summary.reconnectDelay.record(delayMs) }
        case .fail:
            webSocket.summary.fails += 1
            route.fails += 1
            if let reason = e.reason { webSocket.reasons[reason, default: 0] += 1 }
        case .other:
            break
        }
    }

    /// The WebSocket part of ``summary()``, with ids named and keys bounded in a fixed order.
    func webSocketSummary(routeName: (Int) -> String) -> WebSocketSummary {
        var s = webSocket.summary
        for (code, n) in webSocket.codes.sorted(by: { $0.key < $1.key }) {
            s.abnormalCodes.addBounded(WebSocketSummary.codeKey(code == Int.min ? nil : code), n)
        }
        for (reason, n) in webSocket.reasons.map({ (smallStrings.string($0.key), $0.value) }).sorted(by: { $0.0 < $1.0 }) {
            s.abnormalReasons.addBounded(reason, n)
        }
        for (route, counts) in webSocket.routes { s.routes[routeName(route), default: WebSocketRouteCounts()].merge(counts) }
        return s
    }
}
