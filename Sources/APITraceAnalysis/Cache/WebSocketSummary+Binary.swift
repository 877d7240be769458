import APITraceFormat

// The summary cache's encoding of a ``WebSocketSummary``, decoded as hostile input like the rest
// of ``TraceSummary`` (bounded counts and keys, non-negative totals).

extension WebSocketSummary {
    func encode(into w: inout BinaryWriter) {
        w.put(opens); w.put(closes); w.put(failedAttempts); w.put(abnormalCloses); w.put(reconnects); w.put(fails)
        w.put(abnormalCodes); w.put(abnormalReasons)
        w.put(connectedMilliseconds)
        connectionDuration.encode(into: &w)
        w.put(messagesIn); w.put(messagesOut); w.put(bytesIn); w.put(bytesOut)
        reconnectDelay.encode(into: &w)
        w.put(longestSilenceMilliseconds + 1)
        w.putCount(routes.count)
        for (route, c) in routes.sorted(by: { $0.key < $1.key }) {
            w.put(route)
            w.put(c.opens); w.put(c.closes); w.put(c.abnormalCloses); w.put(c.reconnects); w.put(c.fails)
            w.put(c.messagesIn)
        }
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        self.init()
        opens = try r.count(); closes = try r.count(); failedAttempts = try r.count()
        abnormalCloses = try r.count(); reconnects = try r.count(); fails = try r.count()
        abnormalCodes = try r.counts(); abnormalReasons = try r.counts()
        let keyLimit = [String: Int].boundedKeyLimit
        guard abnormalCodes.count <= keyLimit, abnormalReasons.count <= keyLimit else { throw .init() }
        connectedMilliseconds = try r.bytesTotal()
        connectionDuration = try QuantileSketch(decoding: &r)
        messagesIn = try r.bytesTotal(); messagesOut = try r.bytesTotal()
        bytesIn = try r.bytesTotal(); bytesOut = try r.bytesTotal()
        reconnectDelay = try QuantileSketch(decoding: &r)
        longestSilenceMilliseconds = try r.bytesTotal() - 1
        let routeCount = try r.items(minimumSize: 17)
        guard routeCount <= TraceSummary.maximumKeys else { throw .init() }
        for _ in 0..<routeCount {
            let route = try r.string()
            var c = WebSocketRouteCounts()
            c.opens = try r.count(); c.closes = try r.count(); c.abnormalCloses = try r.count()
            c.reconnects = try r.count(); c.fails = try r.count()
            c.messagesIn = try r.bytesTotal()
            routes[route] = c
        }
    }
}
