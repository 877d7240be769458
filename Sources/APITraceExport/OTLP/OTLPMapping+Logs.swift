import APITraceFormat

extension OTLPMapping {
    // Log records are rarer than requests: their texts are made as `String`s, once each.

    private static func begin(_ r: TraceRecord, severity: Int, text: String, body: String, into sink: inout some OTLPItemSink) {
        var text = text
        var body = body
        text.withUTF8 { t in
            body.withUTF8 { b in
                sink.beginLog(time: nanos(r.timestamp), severity: severity, severityText: UnsafeRawBufferPointer(t), body: UnsafeRawBufferPointer(b))
            }
        }
    }

    /// Ends a log record with the event's trace id, and its span id only with a trace id (alone it means nothing).
    private static func end(_ r: TraceRecord, name: StaticString, into sink: inout some OTLPItemSink) {
        let traceID = OTLPIdentifiers.traceID(r.traceID?.bytes)
        sink.endLog(traceID: traceID, spanID: traceID == nil ? nil : OTLPIdentifiers.spanID(r.spanID?.bytes), eventName: name)
    }

    static func decodeFailure(_ r: TraceRecord, into sink: inout some OTLPItemSink) {
        let entity = r.entity?.string ?? ""
        let kind = r.failureKind?.string ?? ""
        let path = r.path?.string ?? ""
        let message = r.message?.string ?? ""
        let at = path.isEmpty ? "" : " at \(path)"
        begin(r, severity: 17, text: "ERROR", body: "\(entity): \(kind)\(at)" + (message.isEmpty ? "" : ": \(message)"), into: &sink)
        sink.attribute("url.template", r.route)
        sink.attribute("apitrace.decode.entity", entity)
        sink.attribute("apitrace.decode.kind", kind)
        sink.attribute("apitrace.decode.path", path.isEmpty ? nil : path)
        sink.attribute("apitrace.decode.path_pattern", path.isEmpty ? nil : TraceEvent.DecodeFailure.foldIndices(path))
        sink.attribute("apitrace.decode.key", r.key)
        sink.attribute("error.type", "DecodingError.\(kind)")
        end(r, name: "apitrace.decode_failure", into: &sink)
    }

    static func recordedError(_ r: TraceRecord, into sink: inout some OTLPItemSink) {
        let identity = r.identity?.string ?? ""
        let message = r.message?.string ?? ""
        begin(r, severity: 17, text: "ERROR", body: message.isEmpty ? identity : message, into: &sink)
        sink.attribute("error.type", identity)
        sink.attribute("exception.type", identity)
        sink.attribute("exception.message", message.isEmpty ? nil : message)
        sink.attribute("url.template", r.route)
        sink.attribute("code.file.path", r.file)
        sink.attribute("code.line.number", r.line)
        let underlying = r.underlyingJSON.jsonStrings
        sink.attribute("apitrace.error.underlying", underlying.isEmpty ? nil : underlying.joined(separator: " <- "))
        sink.attribute("apitrace.error.suppressed", r.suppressed)
        for (key, value) in r.userInfoJSON.jsonStringMap.sorted(by: { $0.key < $1.key }) {
            sink.attribute("apitrace.error.user_info.", suffix: key, value)
        }
        end(r, name: "apitrace.error", into: &sink)
    }

    static func sse(_ r: TraceRecord, into sink: inout some OTLPItemSink) {
        let phase = r.phase?.string ?? ""
        let route = r.route?.string ?? ""
        let reason = r.reason?.string
        let (severity, text): (Int, String) =
            switch phase {
            case "fail": (17, "ERROR")
            case "reconnect": (13, "WARN")
            default: (9, "INFO")
            }
        var body = "SSE \(phase) \(route)"
        if let reason { body += " (\(reason))" }
        if phase == "reconnect", let delay = r.delayMs { body += " after \(delay) ms" }
        begin(r, severity: severity, text: text, body: body, into: &sink)
        sink.attribute("url.template", route)
        sink.attribute("apitrace.sse.phase", phase)
        sink.attribute("apitrace.sse.attempt", r.attempt)
        sink.attribute("apitrace.sse.delay_ms", r.delayMs)
        sink.attribute("apitrace.sse.last_event_id", r.lastEventID)
        sink.attribute("apitrace.sse.reason", reason)
        sink.attribute("http.response.status_code", r.status)
        sink.attribute("apitrace.sse.events", r.events)
        sink.attribute("apitrace.sse.duration_ms", r.durationMs)
        end(r, name: "apitrace.sse", into: &sink)
    }

    static func webSocket(_ r: TraceRecord, into sink: inout some OTLPItemSink) {
        let phase = r.phase?.string ?? ""
        let route = r.route?.string ?? ""
        let code = r.code.map { Int($0) }
        let reason = r.reason?.string
        // A close other than a normal (1000) or going-away (1001) one is what a user wants flagged.
        let abnormalClose = phase == "close" && TraceEvent.WebSocket.isAbnormalClose(code: code)
        let (severity, text): (Int, String) =
            phase == "fail" ? (17, "ERROR") : phase == "reconnect" || abnormalClose ? (13, "WARN") : (9, "INFO")
        var body = "WebSocket \(phase) \(route)"
        if let code { body += " \(code)" }
        if let reason { body += " (\(reason))" }
        begin(r, severity: severity, text: text, body: body, into: &sink)
        sink.attribute("url.template", route)
        sink.attribute("apitrace.websocket.phase", phase)
        sink.attribute("apitrace.websocket.attempt", r.attempt)
        sink.attribute("apitrace.websocket.close_code", code)
        sink.attribute("apitrace.websocket.reason", reason)
        sink.attribute("apitrace.websocket.closed_by", r.closedBy)
        sink.attribute("http.response.status_code", r.status)
        sink.attribute("apitrace.websocket.delay_ms", r.delayMs)
        sink.attribute("apitrace.websocket.duration_ms", r.durationMs)
        sink.attribute("apitrace.websocket.messages_in", r.messagesIn)
        sink.attribute("apitrace.websocket.messages_out", r.messagesOut)
        sink.attribute("apitrace.websocket.bytes_in", r.bytesIn)
        sink.attribute("apitrace.websocket.bytes_out", r.bytesOut)
        sink.attribute("apitrace.websocket.pings", r.pings)
        sink.attribute("apitrace.websocket.ping_rtt_ms", r.pingRTTMs)
        sink.attribute("apitrace.websocket.silence_ms", r.silenceMs)
        end(r, name: "apitrace.websocket", into: &sink)
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

    static func log(_ r: TraceRecord, into sink: inout some OTLPItemSink) {
        let (severity, text) = severity(of: r.level?.string ?? "")
        begin(r, severity: severity, text: text, body: r.message?.string ?? "", into: &sink)
        sink.attribute("apitrace.log.source", r.source)
        for (key, value) in r.metadataJSON.jsonStringMap.sorted(by: { $0.key < $1.key }) where !key.isEmpty {
            sink.attribute("apitrace.log.metadata.", suffix: key, value)
        }
        end(r, name: "apitrace.log", into: &sink)
    }

    static func dropped(_ r: TraceRecord, into sink: inout some OTLPItemSink) {
        let count = Int(clamping: r.count ?? 0)
        let reason = r.reason?.string ?? "unknown"
        begin(r, severity: 13, text: "WARN", body: "\(count) events dropped (\(reason))", into: &sink)
        sink.attribute("apitrace.dropped.count", count)
        sink.attribute("apitrace.dropped.reason", reason)
        end(r, name: "apitrace.dropped", into: &sink)
    }
}
