public import APITraceFormat

/// How apitrace's events become OpenTelemetry data, following the stable HTTP semantic conventions
/// where they apply (Docs/otlp.md has the table): a `request` becomes a CLIENT span, every other
/// event type a log record carrying the trace and span ids it belongs to.
public enum OTLPMapping {
    /// What one event becomes.
    public enum Item: Sendable, Equatable {
        case span(OTLPSpan)
        case log(OTLPLogRecord)
    }

    /// The span or log record of `event`.
    public static func map(_ event: TraceEvent) -> Item {
        switch event.payload {
        case .request(let r): .span(span(of: r, event: event))
        case .decodeFailure(let d): .log(decodeFailure(d, event: event))
        case .error(let e): .log(recordedError(e, event: event))
        case .sse(let s): .log(sse(s, event: event))
        case .log(let l): .log(log(l, event: event))
        case .dropped(let d): .log(dropped(d, event: event))
        case .websocket(let w): .log(webSocket(w, event: event))
        }
    }

    static func nanos(_ time: TraceTimestamp) -> UInt64 { UInt64(clamping: max(0, time.millisecondsSince1970)) &* 1_000_000 }

    static func nanos(milliseconds: Double) -> UInt64 {
        guard milliseconds.isFinite, milliseconds > 0 else { return 0 }
        return UInt64(min(milliseconds * 1_000_000, 9.0e18).rounded())
    }

    // MARK: - Requests

    /// The CLIENT span of a request.
    public static func span(of r: TraceEvent.Request, event: TraceEvent) -> OTLPSpan {
        let end = nanos(event.timestamp)
        let duration = nanos(milliseconds: r.durationMs)
        let start = end >= duration ? end - duration : 0
        let traceID: [UInt8]
        let spanID: [UInt8]
        if let own = OTLPIdentifiers.traceID(event.traceID), let span = OTLPIdentifiers.spanID(event.spanID) {
            (traceID, spanID) = (own, span)
        } else {
            // Derived from what the event holds (no string formatting: numbers go in by their bits).
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            OTLPIdentifiers.mix(&h, event.traceID)
            OTLPIdentifiers.mix(&h, event.session)
            OTLPIdentifiers.mix(&h, UInt64(bitPattern: event.timestamp.millisecondsSince1970))
            OTLPIdentifiers.mix(&h, r.method)
            OTLPIdentifiers.mix(&h, r.route)
            OTLPIdentifiers.mix(&h, r.host)
            OTLPIdentifiers.mix(&h, r.durationMs.bitPattern)
            OTLPIdentifiers.mix(&h, UInt64(bitPattern: Int64(r.attempt)))
            OTLPIdentifiers.mix(&h, r.error)
            OTLPIdentifiers.mix(&h, UInt64(bitPattern: Int64(r.status ?? -1)))
            var h2 = h
            OTLPIdentifiers.mix(&h2, 0x9e37_79b9_7f4a_7c15)
            var h3 = h2
            OTLPIdentifiers.mix(&h3, 0x84222325cbf29ce4)
            traceID = OTLPIdentifiers.traceID(event.traceID) ?? OTLPIdentifiers.bytes(h | 1) + OTLPIdentifiers.bytes(h2)
            spanID = OTLPIdentifiers.spanID(event.spanID) ?? OTLPIdentifiers.bytes(h3 | 1)
        }

        let outcome = r.outcome
        // Routes never hold a query (the writers redact it); a file that does anyway does not leak it here.
        let route = withoutQuery(r.route)
        var a: [OTLPAttribute] = []
        a.add("http.request.method", r.method)
        let host = r.host.map(sanitizedHost)
        a.add("server.address", host)
        a.add("server.port", r.port)
        a.add("url.full", fullURL(host: host, port: r.port, route: route))
        a.add("url.template", route)
        a.add("http.response.status_code", r.status)
        a.add("error.type", errorType(r))
        if r.attempt > 1 { a.add("http.request.resend_count", r.attempt - 1) }
        a.add("network.protocol.version", protocolVersion(r.timing?.networkProtocol))
        a.add("network.protocol.name", r.timing?.networkProtocol.map { _ in "http" })
        a.add("http.response.body.size", r.bytesIn)
        a.add("http.request.body.size", r.bytesOut)
        a.add("apitrace.outcome", outcome.rawValue)
        a.add("apitrace.sample_rate", r.sampleRate)
        if r.weight != 1 { a.add("apitrace.weight", r.weight) }
        a.add("apitrace.connection.reused", r.timing?.reusedConnection)

        var events: [OTLPSpan.Event] = []
        if let t = r.timing {
            func phase(_ name: String, endingAfter ms: Double?, lasting length: Double?) {
                guard let ms, let length else { return }
                var attrs: [OTLPAttribute] = []
                attrs.add("apitrace.duration_ms", length)
                events.append(OTLPSpan.Event(timeUnixNano: start &+ nanos(milliseconds: ms), name: name, attributes: attrs))
            }
            phase("http.dns", endingAfter: t.dnsMs, lasting: t.dnsMs)
            phase("http.connect", endingAfter: t.connectMs.map { (t.dnsMs ?? 0) + $0 }, lasting: t.connectMs)
            phase("http.tls", endingAfter: t.connectMs.map { (t.dnsMs ?? 0) + $0 } ?? t.tlsMs, lasting: t.tlsMs)
            phase("http.first_byte", endingAfter: t.firstByteMs, lasting: t.firstByteMs)
        }

        let status: OTLPSpan.StatusCode
        switch outcome {
        case .success, .cancelled, .offline: status = .unset
        // The client convention: 4xx is an error for the client's span (apitrace's reports count them apart).
        case .clientError, .serverError, .transport: status = .error
        }
        let name = route.isEmpty ? r.method : "\(r.method) \(route)"
        return OTLPSpan(
            traceID: traceID, spanID: spanID, name: name, kind: .client, startTimeUnixNano: start, endTimeUnixNano: end,
            attributes: a, events: events, status: status, statusMessage: status == .error ? (errorType(r) ?? "") : "")
    }

    /// `error.type`: the error identity, else the status code as text for a status of 400 and up.
    static func errorType(_ r: TraceEvent.Request) -> String? {
        if let error = r.error { return error }
        if let status = r.status, status >= 400 { return String(status) }
        return nil
    }

    /// A host as the trace holds it, without user information a hostile or careless producer left in it.
    static func sanitizedHost(_ host: String) -> String {
        guard let at = host.lastIndex(of: "@") else { return host }
        return String(host[host.index(after: at)...])
    }

    /// `https://host[:port]/route`: traces keep the route template, never the URL, so this is the
    /// URL with its template path; no credentials, no query, no fragment.
    static func fullURL(host: String?, port: Int?, route: String) -> String? {
        guard let host, !host.isEmpty else { return nil }
        var path = withoutQuery(route)
        if !path.hasPrefix("/") { path = "/" + path }
        let scheme = port == 80 ? "http" : "https"
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let portPart = port.map { $0 == 443 || $0 == 80 ? "" : ":\($0)" } ?? ""
        return "\(scheme)://\(hostPart)\(portPart)\(path)"
    }

    /// `route` up to its first `?` or `#`.
    static func withoutQuery(_ route: String) -> String {
        guard let cut = route.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return route }
        return String(route[..<cut])
    }

    /// `network.protocol.version` from the ALPN name: `http/1.1` is `1.1`, `h2` is `2`, `h3` is `3`.
    static func protocolVersion(_ alpn: String?) -> String? {
        guard let alpn = alpn?.lowercased() else { return nil }
        switch alpn {
        case "h2", "h2c": return "2"
        case "h3": return "3"
        default:
            if alpn.hasPrefix("http/") { return String(alpn.dropFirst(5)) }
            return nil
        }
    }

    // MARK: - Log records

    private static func record(
        _ event: TraceEvent, name: String, severity: Int, text: String, body: String, attributes: [OTLPAttribute]
    ) -> OTLPLogRecord {
        OTLPLogRecord(
            timeUnixNano: nanos(event.timestamp), severityNumber: severity, severityText: text, body: body, eventName: name,
            attributes: attributes, traceID: OTLPIdentifiers.traceID(event.traceID) ?? [],
            spanID: OTLPIdentifiers.traceID(event.traceID) == nil ? [] : OTLPIdentifiers.spanID(event.spanID) ?? [])
    }

    static func decodeFailure(_ d: TraceEvent.DecodeFailure, event: TraceEvent) -> OTLPLogRecord {
        var a: [OTLPAttribute] = []
        a.add("url.template", d.route)
        a.add("apitrace.decode.entity", d.entity)
        a.add("apitrace.decode.kind", d.kind.rawValue)
        a.add("apitrace.decode.path", d.path.isEmpty ? nil : d.path)
        a.add("apitrace.decode.path_pattern", d.path.isEmpty ? nil : d.pathPattern)
        a.add("apitrace.decode.key", d.key)
        a.add("error.type", "DecodingError.\(d.kind.rawValue)")
        let at = d.path.isEmpty ? "" : " at \(d.path)"
        let body = "\(d.entity): \(d.kind.rawValue)\(at)" + (d.message.isEmpty ? "" : ": \(d.message)")
        return record(event, name: "apitrace.decode_failure", severity: 17, text: "ERROR", body: body, attributes: a)
    }

    static func recordedError(_ e: TraceEvent.RecordedError, event: TraceEvent) -> OTLPLogRecord {
        var a: [OTLPAttribute] = []
        a.add("error.type", e.identity)
        a.add("exception.type", e.identity)
        a.add("exception.message", e.message.isEmpty ? nil : e.message)
        a.add("url.template", e.route)
        a.add("code.file.path", e.file)
        a.add("code.line.number", e.line)
        a.add("apitrace.error.underlying", e.underlying.isEmpty ? nil : e.underlying.joined(separator: " <- "))
        a.add("apitrace.error.suppressed", e.suppressed)
        for (key, value) in e.userInfo.sorted(by: { $0.key < $1.key }) { a.add("apitrace.error.user_info.\(key)", value) }
        return record(event, name: "apitrace.error", severity: 17, text: "ERROR", body: e.message.isEmpty ? e.identity : e.message, attributes: a)
    }

    static func sse(_ s: TraceEvent.SSE, event: TraceEvent) -> OTLPLogRecord {
        var a: [OTLPAttribute] = []
        a.add("url.template", s.route)
        a.add("apitrace.sse.phase", s.phase.rawValue)
        a.add("apitrace.sse.attempt", s.attempt)
        a.add("apitrace.sse.delay_ms", s.delayMs)
        a.add("apitrace.sse.last_event_id", s.lastEventID)
        a.add("apitrace.sse.reason", s.reason)
        a.add("http.response.status_code", s.status)
        a.add("apitrace.sse.events", s.events)
        a.add("apitrace.sse.duration_ms", s.durationMs)
        let (severity, text): (Int, String) =
            switch s.phase {
            case .fail: (17, "ERROR")
            case .reconnect: (13, "WARN")
            default: (9, "INFO")
            }
        var body = "SSE \(s.phase.rawValue) \(s.route)"
        if let reason = s.reason { body += " (\(reason))" }
        if s.phase == .reconnect, let delay = s.delayMs { body += " after \(delay) ms" }
        return record(event, name: "apitrace.sse", severity: severity, text: text, body: body, attributes: a)
    }

    static func webSocket(_ w: TraceEvent.WebSocket, event: TraceEvent) -> OTLPLogRecord {
        var a: [OTLPAttribute] = []
        a.add("url.template", w.route)
        a.add("apitrace.websocket.phase", w.phase.rawValue)
        a.add("apitrace.websocket.attempt", w.attempt)
        a.add("apitrace.websocket.close_code", w.code)
        a.add("apitrace.websocket.reason", w.reason)
        a.add("apitrace.websocket.closed_by", w.closedBy)
        a.add("http.response.status_code", w.status)
        a.add("apitrace.websocket.delay_ms", w.delayMs)
        a.add("apitrace.websocket.duration_ms", w.durationMs)
        a.add("apitrace.websocket.messages_in", w.messagesIn)
        a.add("apitrace.websocket.messages_out", w.messagesOut)
        a.add("apitrace.websocket.bytes_in", w.bytesIn.map { Int(clamping: $0) })
        a.add("apitrace.websocket.bytes_out", w.bytesOut.map { Int(clamping: $0) })
        a.add("apitrace.websocket.pings", w.pings)
        a.add("apitrace.websocket.ping_rtt_ms", w.pingRTTMs)
        a.add("apitrace.websocket.silence_ms", w.silenceMs)
        // A close other than a normal (1000) or going-away (1001) one is what a user wants flagged.
        let abnormalClose = w.phase.rawValue == "close" && TraceEvent.WebSocket.isAbnormalClose(code: w.code)
        let (severity, text): (Int, String) =
            w.phase.rawValue == "fail" ? (17, "ERROR")
            : w.phase.rawValue == "reconnect" || abnormalClose ? (13, "WARN") : (9, "INFO")
        var body = "WebSocket \(w.phase.rawValue) \(w.route)"
        if let code = w.code { body += " \(code)" }
        if let reason = w.reason { body += " (\(reason))" }
        return record(event, name: "apitrace.websocket", severity: severity, text: text, body: body, attributes: a)
    }

    /// swift-log's levels on OpenTelemetry's severity numbers.
    static func severity(of level: String) -> (Int, String) {
        switch level.lowercased() {
        case "trace": (1, "TRACE")
        case "debug": (5, "DEBUG")
        case "info": (9, "INFO")
        case "notice": (10, "NOTICE")
        case "warning", "warn": (13, "WARN")
        case "error": (17, "ERROR")
        case "critical", "fatal": (21, "FATAL")
        default: (0, level)
        }
    }

    static func log(_ l: TraceEvent.Log, event: TraceEvent) -> OTLPLogRecord {
        var a: [OTLPAttribute] = []
        a.add("apitrace.log.source", l.source)
        for (key, value) in l.metadata.sorted(by: { $0.key < $1.key }) where !key.isEmpty { a.add("apitrace.log.metadata.\(key)", value) }
        let (severity, text) = severity(of: l.level)
        return record(event, name: "apitrace.log", severity: severity, text: text, body: l.message, attributes: a)
    }

    static func dropped(_ d: TraceEvent.Dropped, event: TraceEvent) -> OTLPLogRecord {
        var a: [OTLPAttribute] = []
        a.add("apitrace.dropped.count", d.count)
        a.add("apitrace.dropped.reason", d.reason)
        return record(event, name: "apitrace.dropped", severity: 13, text: "WARN", body: "\(d.count) events dropped (\(d.reason))", attributes: a)
    }
}
