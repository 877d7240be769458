extension TraceEvent {
    /// Appends this event as one JSON object, without the trailing newline.
    ///
    /// Field order is fixed (`type`, `ts`, `session`, `trace_id`, then the type's fields) so files
    /// compress well and read well; absent optionals are left out rather than written as `null`.
    package func encode(to out: inout JSONOutput) {
        out.beginObject()
        out.field("type", payload.type)
        out.field("ts", timestamp)
        out.field("session", session)
        out.field("trace_id", traceID)
        out.field("span_id", spanID)
        switch payload {
        case .request(let r):
            out.field("method", r.method)
            out.field("route", r.route)
            out.field("host", r.host)
            out.field("port", r.port)
            out.field("status", r.status)
            out.field("duration_ms", r.durationMs)
            out.field("bytes_in", r.bytesIn)
            out.field("bytes_out", r.bytesOut)
            out.field("error", r.error)
            out.field("attempt", r.attempt)
            out.field("sample_rate", r.sampleRate)
            if let t = r.timing {
                // A phase readers would refuse (negative, beyond 100 days, not finite) is left out
                // rather than costing the whole line.
                func phase(_ ms: Double?) -> Double? { ms.flatMap { TraceRecord.Limits.milliseconds.contains($0) ? $0 : nil } }
                out.field("dns_ms", phase(t.dnsMs))
                out.field("connect_ms", phase(t.connectMs))
                out.field("tls_ms", phase(t.tlsMs))
                out.field("ttfb_ms", phase(t.firstByteMs))
                out.field("protocol", t.networkProtocol)
                out.field("reused", t.reusedConnection)
            }
        case .decodeFailure(let d):
            out.field("route", d.route)
            out.field("entity", d.entity)
            out.field("kind", d.kind.rawValue)
            out.field("path", d.path)
            out.field("key", d.key)
            out.field("message", d.message)
        case .error(let e):
            out.field("identity", e.identity)
            out.field("message", e.message)
            out.field("user_info", e.userInfo)
            if !e.underlying.isEmpty { out.field("underlying", e.underlying) }
            out.field("route", e.route)
            out.field("file", e.file)
            out.field("line", e.line)
            out.field("suppressed", e.suppressed)
        case .sse(let s):
            out.field("phase", s.phase.rawValue)
            out.field("route", s.route)
            out.field("attempt", s.attempt)
            out.field("delay_ms", s.delayMs)
            out.field("last_event_id", s.lastEventID)
            out.field("reason", s.reason)
            out.field("status", s.status)
            out.field("events", s.events)
            out.field("duration_ms", s.durationMs)
        case .websocket(let w):
            out.field("phase", w.phase.rawValue)
            out.field("route", w.route)
            out.field("attempt", w.attempt)
            out.field("code", w.code)
            out.field("reason", w.reason)
            out.field("closed_by", w.closedBy)
            out.field("status", w.status)
            out.field("delay_ms", w.delayMs)
            out.field("duration_ms", w.durationMs)
            out.field("messages_in", w.messagesIn)
            out.field("messages_out", w.messagesOut)
            out.field("bytes_in", w.bytesIn)
            out.field("bytes_out", w.bytesOut)
            out.field("pings", w.pings)
            out.field("ping_rtt_ms", w.pingRTTMs)
            out.field("silence_ms", w.silenceMs)
        case .log(let l):
            out.field("level", l.level)
            out.field("message", l.message)
            out.field("metadata", l.metadata)
            out.field("source", l.source)
        case .dropped(let d):
            out.field("count", d.count)
            out.field("reason", d.reason)
        }
        out.endObject()
    }

    /// This event as one line of JSON, without the trailing newline.
    package var jsonLine: String {
        var out = JSONOutput()
        encode(to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

extension TraceFileHeader {
    /// Appends the header as one JSON object, without the trailing newline.
    package func encode(to out: inout JSONOutput) {
        out.beginObject()
        out.field("type", "header")
        out.field("format", TraceFileHeader.formatName)
        out.field("version", version)
        out.field("producer", producer)
        out.field("app", app)
        out.field("app_version", appVersion)
        out.field("host", host)
        out.field("started", started)
        out.endObject()
    }

    /// The header as one line of JSON, without the trailing newline.
    package var jsonLine: String {
        var out = JSONOutput()
        encode(to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
