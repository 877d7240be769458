public import APITraceFormat

/// How apitrace's events become OpenTelemetry data, following the stable HTTP semantic conventions
/// where they apply (Docs/otlp.md has the table): a `request` becomes a CLIENT span, every other
/// event type a log record carrying the trace and span ids it belongs to.
///
/// The one mapping reads the reading layer's scanned lines (``TraceRecord``) and writes into an
/// ``OTLPItemSink``: the export encodes protobuf straight from the line's bytes, ``map(_:)`` makes
/// values for a ``TraceEvent`` built in code.
public enum OTLPMapping {
    /// What one event becomes.
    public enum Item: Sendable, Equatable {
        case span(OTLPSpan)
        case log(OTLPLogRecord)
    }

    /// The span or log record of `event`.
    public static func map(_ event: TraceEvent) -> Item {
        var builder = OTLPItemBuilder()
        withRecord(of: event) { record in
            var scratch = Scratch()
            map(record, into: &builder, scratch: &scratch)
        }
        return builder.item!
    }

    /// Writes what a scanned event line becomes into `sink`.
    static func map(_ record: TraceRecord, into sink: inout some OTLPItemSink, scratch: inout Scratch) {
        switch record.kind {
        case .request: span(of: record, into: &sink, scratch: &scratch)
        case .decodeFailure: decodeFailure(record, into: &sink)
        case .error: recordedError(record, into: &sink)
        case .sse: sse(record, into: &sink)
        case .log: log(record, into: &sink)
        case .dropped: dropped(record, into: &sink)
        case .websocket: webSocket(record, into: &sink)
        }
    }

    /// Room to compose texts (names, URLs), kept across events.
    struct Scratch {
        var bytes = OTLPTextBuffer()
        var more = OTLPTextBuffer()
    }

    static func nanos(_ milliseconds: Int64) -> UInt64 { UInt64(clamping: max(0, milliseconds)) &* 1_000_000 }

    static func nanos(milliseconds: Double) -> UInt64 {
        guard milliseconds.isFinite, milliseconds > 0 else { return 0 }
        return UInt64(min(milliseconds * 1_000_000, 9.0e18).rounded())
    }

    // MARK: - Requests

    /// The CLIENT span of a request.
    static func span(of r: TraceRecord, into sink: inout some OTLPItemSink, scratch: inout Scratch) {
        let end = nanos(r.timestamp)
        let durationMs = r.durationMs ?? 0
        let duration = nanos(milliseconds: durationMs)
        let start = end >= duration ? end - duration : 0
        let method = r.method?.bytes ?? RawText.empty.bytes
        let rawRoute = r.route?.bytes ?? RawText.empty.bytes
        let attempt = Int(r.attempt ?? 1)
        let traceID: OTLPIdentifiers.TraceID
        let spanID: UInt64
        let ownTrace = OTLPIdentifiers.traceID(r.traceID?.bytes)
        let ownSpan = OTLPIdentifiers.spanID(r.spanID?.bytes)
        if let ownTrace, let ownSpan {
            (traceID, spanID) = (ownTrace, ownSpan)
        } else {
            // Derived from what the event holds (no string formatting: numbers go in by their bits).
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            OTLPIdentifiers.mix(&h, r.traceID?.bytes)
            OTLPIdentifiers.mix(&h, r.session?.bytes)
            OTLPIdentifiers.mix(&h, UInt64(bitPattern: r.timestamp))
            OTLPIdentifiers.mix(&h, method)
            OTLPIdentifiers.mix(&h, rawRoute)
            OTLPIdentifiers.mix(&h, r.host?.bytes)
            OTLPIdentifiers.mix(&h, durationMs.bitPattern)
            OTLPIdentifiers.mix(&h, UInt64(bitPattern: Int64(attempt)))
            OTLPIdentifiers.mix(&h, r.error?.bytes)
            OTLPIdentifiers.mix(&h, UInt64(bitPattern: Int64(r.status ?? -1)))
            var h2 = h
            OTLPIdentifiers.mix(&h2, 0x9e37_79b9_7f4a_7c15)
            var h3 = h2
            OTLPIdentifiers.mix(&h3, 0x84222325cbf29ce4)
            traceID = ownTrace ?? OTLPIdentifiers.TraceID(high: h | 1, low: h2)
            spanID = ownSpan ?? (h3 | 1)
        }

        // Routes never hold a query (the writers redact it); a file that does anyway does not leak it here.
        let route = withoutQuery(rawRoute)
        scratch.bytes.removeAll()
        scratch.bytes.append(method)
        if route.count > 0 {
            scratch.bytes.append(UInt8(ascii: " "))
            scratch.bytes.append(route)
        }
        scratch.bytes.withUnsafeBytes { sink.beginSpan(traceID: traceID, spanID: spanID, name: $0, start: start, end: end) }

        let port = r.port.map { Int($0) }
        let host = r.host.map { sanitizedHost($0.bytes) }
        sink.attribute("http.request.method", method)
        sink.attribute("server.address", host)
        sink.attribute("server.port", port)
        if let host, host.count > 0 {
            fullURL(host: host, port: port, route: route, into: &scratch.bytes)
            scratch.bytes.withUnsafeBytes { sink.attribute("url.full", $0) }
        }
        sink.attribute("url.template", route)
        sink.attribute("http.response.status_code", r.status)
        errorType(r, into: &scratch.more)
        if r.error != nil || scratch.more.count > 0 { scratch.more.withUnsafeBytes { sink.attribute("error.type", $0) } }
        if attempt > 1 { sink.attribute("http.request.resend_count", attempt - 1) }
        if let alpn = r.networkProtocol {
            withProtocolVersion(alpn.bytes) { version in sink.attribute("network.protocol.version", version) }
            sink.attribute("network.protocol.name", StaticString("http"))
        }
        sink.attribute("http.response.body.size", r.bytesIn)
        sink.attribute("http.request.body.size", r.bytesOut)
        sink.attribute("apitrace.outcome", r.outcome.staticName)
        sink.attribute("apitrace.sample_rate", r.sampleRate)
        if r.weight != 1 { sink.attribute("apitrace.weight", r.weight) }
        sink.attribute("apitrace.connection.reused", r.reused)

        func phase(_ name: StaticString, endingAfter ms: Double?, lasting length: Double?) {
            guard let ms, let length else { return }
            sink.spanEvent(time: start &+ nanos(milliseconds: ms), name: name, durationMs: length)
        }
        phase("http.dns", endingAfter: r.dnsMs, lasting: r.dnsMs)
        phase("http.connect", endingAfter: r.connectMs.map { (r.dnsMs ?? 0) + $0 }, lasting: r.connectMs)
        phase("http.tls", endingAfter: r.connectMs.map { (r.dnsMs ?? 0) + $0 } ?? r.tlsMs, lasting: r.tlsMs)
        phase("http.first_byte", endingAfter: r.ttfbMs, lasting: r.ttfbMs)

        let status: OTLPSpan.StatusCode
        switch r.outcome {
        case .success, .cancelled, .offline: status = .unset
        // The client convention: 4xx is an error for the client's span (apitrace's reports count them apart).
        case .clientError, .serverError, .transport: status = .error
        }
        if status == .error {
            scratch.more.withUnsafeBytes { sink.endSpan(status: status, message: $0) }
        } else {
            sink.endSpan(status: status, message: RawText.empty.bytes)
        }
    }

    /// `error.type` into `out`: the error identity, else the status code as text for a status of 400
    /// and up, else nothing.
    static func errorType(_ r: TraceRecord, into out: inout OTLPTextBuffer) {
        out.removeAll()
        if let error = r.error {
            out.append(error.bytes)
        } else if let status = r.status, status >= 400 {
            out.append(decimal: status)
        }
    }

    /// A host as the trace holds it, without user information a hostile or careless producer left in it.
    static func sanitizedHost(_ host: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        // A loop over the bytes: `lastIndex(of:)` took its generic path, once per span.
        var at = host.count
        while at > 0 {
            at -= 1
            if host[at] == UInt8(ascii: "@") { return UnsafeRawBufferPointer(rebasing: host[(at + 1)...]) }
        }
        return host
    }

    /// `https://host[:port]/route` into `out`: traces keep the route template, never the URL, so this
    /// is the URL with its template path; no credentials, no query, no fragment.
    static func fullURL(host: UnsafeRawBufferPointer, port: Int?, route: UnsafeRawBufferPointer, into out: inout OTLPTextBuffer) {
        out.removeAll()
        out.append(port == 80 ? StaticString("http://") : StaticString("https://"))
        var colon = false
        for c in host where c == UInt8(ascii: ":") { colon = true; break }
        let bracketed = colon && host.first != UInt8(ascii: "[")
        if bracketed { out.append(UInt8(ascii: "[")) }
        out.append(host)
        if bracketed { out.append(UInt8(ascii: "]")) }
        if let port, port != 443, port != 80 {
            out.append(UInt8(ascii: ":"))
            out.append(decimal: port)
        }
        let path = withoutQuery(route)
        if path.first != UInt8(ascii: "/") { out.append(UInt8(ascii: "/")) }
        out.append(path)
    }

    /// `route` up to its first `?` or `#`.
    static func withoutQuery(_ route: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        // A loop over the bytes: `firstIndex(where:)` took its generic path, twice per span.
        for cut in 0..<route.count where route[cut] == UInt8(ascii: "?") || route[cut] == UInt8(ascii: "#") {
            return UnsafeRawBufferPointer(rebasing: route[..<cut])
        }
        return route
    }

    /// ``withoutQuery(_:)-(UnsafeRawBufferPointer)`` of a `String` (the metrics' labels).
    static func withoutQuery(_ route: String) -> String {
        var route = route
        return route.withUTF8 { String(decoding: withoutQuery(UnsafeRawBufferPointer($0)), as: UTF8.self) }
    }

    /// ``sanitizedHost(_:)-(UnsafeRawBufferPointer)`` of a `String` (the metrics' labels).
    static func sanitizedHost(_ host: String) -> String {
        var host = host
        return host.withUTF8 { String(decoding: sanitizedHost(UnsafeRawBufferPointer($0)), as: UTF8.self) }
    }

    /// `network.protocol.version` from the ALPN name: `http/1.1` is `1.1`, `h2` is `2`, `h3` is `3`
    /// (letters compared without case); nothing for other names.
    static func withProtocolVersion(_ alpn: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard alpn.allSatisfy({ $0 < 0x80 }) else {
            // Beyond ASCII, lowercasing is Unicode's.
            let lowered = String(decoding: alpn, as: UTF8.self).lowercased()
            guard lowered.hasPrefix("http/") else { return }
            var version = String(lowered.dropFirst(5))
            version.withUTF8 { body(UnsafeRawBufferPointer($0)) }
            return
        }
        func lower(_ c: UInt8) -> UInt8 { c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c }
        func equals(_ name: StaticString) -> Bool {
            alpn.count == name.utf8CodeUnitCount && zip(alpn, name.bytes).allSatisfy { lower($0) == $1 }
        }
        if equals("h2") || equals("h2c") { return body(StaticString("2").bytes) }
        if equals("h3") { return body(StaticString("3").bytes) }
        let prefix: StaticString = "http/"
        guard alpn.count >= 5, zip(alpn.prefix(5), prefix.bytes).allSatisfy({ lower($0) == $1 }) else { return }
        var version = [UInt8](alpn.dropFirst(5))
        for i in version.indices { version[i] = lower(version[i]) }
        version.withUnsafeBytes(body)
    }
}

extension RequestOutcome {
    /// ``rawValue`` as static text (no `String` per span).
    var staticName: StaticString {
        switch self {
        case .success: "success"
        case .clientError: "client_error"
        case .serverError: "server_error"
        case .transport: "transport"
        case .cancelled: "cancelled"
        case .offline: "offline"
        }
    }
}
