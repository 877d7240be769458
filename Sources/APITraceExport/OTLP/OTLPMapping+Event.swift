import APITraceFormat

extension OTLPMapping {
    /// Calls `body` with the ``TraceRecord`` of an event built in code, its texts held in one buffer
    /// for the call, so events and scanned lines take the one mapping. Values are taken as they are
    /// (no range is checked: the event was not read from a file).
    static func withRecord(of event: TraceEvent, _ body: (TraceRecord) -> Void) {
        var texts: [String?] = [event.type, event.session, event.traceID, event.spanID]
        func json(_ write: (inout JSONOutput) -> Void) -> String {
            // The value of a one-field object: `{"v":` and `}` cut off.
            var out = JSONOutput()
            out.beginObject()
            write(&out)
            out.endObject()
            return String(decoding: out.bytes.dropFirst(5).dropLast(), as: UTF8.self)
        }
        var r = TraceRecord()
        r.timestamp = event.timestamp.millisecondsSince1970
        switch event.payload {
        case .request(let q):
            r.kind = .request
            texts += [q.method, q.route, q.host, q.error, q.timing?.networkProtocol]
            r.status = q.status
            r.durationMs = q.durationMs
            r.bytesIn = q.bytesIn
            r.bytesOut = q.bytesOut
            r.attempt = Int64(q.attempt)
            r.sampleRate = q.sampleRate
            r.dnsMs = q.timing?.dnsMs
            r.connectMs = q.timing?.connectMs
            r.tlsMs = q.timing?.tlsMs
            r.ttfbMs = q.timing?.firstByteMs
            r.reused = q.timing?.reusedConnection
            r.port = q.port.map { Int64($0) }
            r.outcome = q.outcome
            r.weight = q.weight
        case .decodeFailure(let d):
            r.kind = .decodeFailure
            texts += [d.route, d.entity, d.kind.rawValue, d.path, d.key, d.message]
        case .error(let e):
            r.kind = .error
            texts += [e.identity, e.message, e.route, e.file,
                      json { $0.field("v", e.userInfo) }, e.underlying.isEmpty ? nil : json { $0.field("v", e.underlying) }]
            r.line = e.line.map { Int64($0) }
            r.suppressed = e.suppressed.map { Int64($0) }
        case .sse(let s):
            r.kind = .sse
            texts += [s.phase.rawValue, s.route, s.lastEventID, s.reason]
            r.attempt = s.attempt.map { Int64($0) }
            r.delayMs = s.delayMs
            r.status = s.status
            r.events = s.events.map { Int64($0) }
            r.durationMs = s.durationMs
        case .websocket(let w):
            r.kind = .websocket
            texts += [w.phase.rawValue, w.route, w.reason, w.closedBy]
            r.attempt = w.attempt.map { Int64($0) }
            r.code = w.code.map { Int64($0) }
            r.status = w.status
            r.delayMs = w.delayMs
            r.durationMs = w.durationMs
            r.messagesIn = w.messagesIn.map { Int64($0) }
            r.messagesOut = w.messagesOut.map { Int64($0) }
            r.bytesIn = w.bytesIn
            r.bytesOut = w.bytesOut
            r.pings = w.pings.map { Int64($0) }
            r.pingRTTMs = w.pingRTTMs
            r.silenceMs = w.silenceMs
        case .log(let l):
            r.kind = .log
            texts += [l.level, l.message, json { $0.field("v", l.metadata) }, l.source]
        case .dropped(let d):
            r.kind = .dropped
            texts += [d.reason]
            r.count = Int64(d.count)
        }
        var storage: [UInt8] = []
        var ranges: [Range<Int>?] = []
        for text in texts {
            guard let text else { ranges.append(nil); continue }
            let start = storage.count
            storage.append(contentsOf: text.utf8)
            ranges.append(start..<storage.count)
        }
        storage.withUnsafeBytes { base in
            func t(_ i: Int) -> RawText? {
                ranges[i].map { RawText(bytes: UnsafeRawBufferPointer(rebasing: base[$0]), hasEscapes: false) }
            }
            r.type = t(0)
            (r.session, r.traceID, r.spanID) = (t(1), t(2), t(3))
            switch r.kind {
            case .request:
                (r.method, r.route, r.host, r.error, r.networkProtocol) = (t(4), t(5), t(6), t(7), t(8))
            case .decodeFailure:
                (r.route, r.entity, r.failureKind, r.path, r.key, r.message) = (t(4), t(5), t(6), t(7), t(8), t(9))
            case .error:
                (r.identity, r.message, r.route, r.file, r.userInfoJSON, r.underlyingJSON) = (t(4), t(5), t(6), t(7), t(8), t(9))
            case .sse, .websocket:
                (r.phase, r.route) = (t(4), t(5))
                if r.kind == .sse { (r.lastEventID, r.reason) = (t(6), t(7)) } else { (r.reason, r.closedBy) = (t(6), t(7)) }
            case .log:
                (r.level, r.message, r.metadataJSON, r.source) = (t(4), t(5), t(6), t(7))
            case .dropped:
                r.reason = t(4)
            }
            body(r)
        }
    }
}
