package import APITraceFormat

/// Writes one HAR 1.2 entry for a `request` record, straight from the line's bytes: the one
/// rendering of a request as HAR, for the streamed export and for ``HARExporter``.
///
/// Traces hold routes, not URLs, and never headers or bodies, so entries carry what is known:
/// `https://{host}{route}` as the URL (route placeholders percent-encoded), the status, timings
/// (DNS, connect, TLS, waiting and receiving where the event has them, otherwise all of it as
/// waiting), the HTTP version from the protocol, body sizes, and apitrace's own fields (`_route`,
/// `_error`, `_attempt`, `_traceId`, `_session`, `_reusedConnection`). A transport failure becomes
/// status 0 with the error identity as its status text, as browsers do.
///
/// The layout is the one `apitrace export --format har` has always written (Foundation's
/// pretty-printed, sorted-keys JSON): keys sorted, two-space indents, `"key" : value`, numbers as
/// Swift prints them without a trailing `.0`, so an archive streamed in pieces is byte for byte the
/// archive the whole-document encoder wrote.
package enum HAREntryWriter {
    /// When the request started, the key entries are sorted by: its end less its rounded duration.
    @inline(__always)
    package static func started(_ record: TraceRecord) -> Int64 {
        record.timestamp &- Int64((record.durationMs ?? 0).rounded())
    }

    /// The document up to its first entry.
    package static func head(creatorVersion: String, to out: inout JSONOutput) {
        out.bytes.append(contentsOf: "{\n  \"log\" : {\n    \"creator\" : {\n      \"name\" : \"apitrace\",\n      \"version\" : ".utf8)
        out.appendString(creatorVersion)
        out.bytes.append(contentsOf: "\n    },\n    \"entries\" : [\n".utf8)
    }

    /// Between two entries.
    package static let separator: StaticString = ",\n"

    /// The document after its last entry.
    package static func tail(to out: inout JSONOutput) {
        out.bytes.append(contentsOf: "\n    ],\n    \"version\" : \"1.2\"\n  }\n}".utf8)
    }

    /// Appends the entry of a `request` record (indented for the `entries` array): the constant
    /// text between values is written in whole runs, so an entry takes about 30 copies.
    package static func append(_ r: TraceRecord, to out: inout JSONOutput) {
        let total = r.durationMs ?? 0
        let hasTiming = r.dnsMs != nil || r.connectMs != nil || r.tlsMs != nil || r.ttfbMs != nil || r.networkProtocol != nil || r.reused != nil
        let version = httpVersion(r.networkProtocol)
        // Room for a usual entry, growing geometrically: reserving just what one entry needs would
        // copy the whole buffer at every entry once it is full.
        if out.bytes.capacity - out.bytes.count < 1536 { out.bytes.reserveCapacity(max(out.bytes.capacity * 2, out.bytes.count + 1536)) }
        func literal(_ text: StaticString) {
            out.bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        func text(_ t: RawText?) { if let t { out.appendString(utf8: t.bytes) } else { literal("\"\"") } }
        func number(_ v: Double) { appendNumber(v, to: &out) }

        literal("      {\n        \"_attempt\" : "); out.appendInteger(r.attempt ?? 1)
        if let error = r.error { literal(",\n        \"_error\" : "); text(error) }
        if let reused = r.reused { literal(",\n        \"_reusedConnection\" : "); literal(reused ? "true" : "false") }
        literal(",\n        \"_route\" : "); text(r.route)
        if let session = r.session { literal(",\n        \"_session\" : "); text(session) }
        if let traceID = r.traceID { literal(",\n        \"_traceId\" : "); text(traceID) }
        literal(",\n        \"cache\" : {\n\n        },\n        \"request\" : {\n          \"bodySize\" : "); out.appendInteger(r.bytesOut ?? -1)
        literal(",\n          \"cookies\" : [\n\n          ],\n          \"headers\" : [\n\n          ],\n          \"headersSize\" : -1,\n          \"httpVersion\" : ")
        literal(version)
        literal(",\n          \"method\" : "); text(r.method)
        literal(",\n          \"queryString\" : [\n\n          ],\n          \"url\" : "); appendURL(host: r.host, route: r.route, to: &out)
        literal("\n        },\n        \"response\" : {\n          \"bodySize\" : "); out.appendInteger(r.bytesIn ?? -1)
        literal(",\n          \"content\" : {\n            \"mimeType\" : \"\",\n            \"size\" : "); out.appendInteger(r.bytesIn ?? 0)
        literal("\n          },\n          \"cookies\" : [\n\n          ],\n          \"headers\" : [\n\n          ],\n          \"headersSize\" : -1,\n          \"httpVersion\" : ")
        literal(version)
        literal(",\n          \"redirectURL\" : \"\",\n          \"status\" : "); out.appendInteger(Int64(r.status ?? 0))
        literal(",\n          \"statusText\" : ")
        if let status = r.status {
            out.bytes.append(UInt8(ascii: "\""))
            out.bytes.append(contentsOf: reasonPhrase(status).utf8)
            out.bytes.append(UInt8(ascii: "\""))
        } else if let error = r.error {
            text(error)
        } else {
            literal("\"transport error\"")
        }
        literal("\n        },\n        \"startedDateTime\" : \"")
        TraceTimestamp(millisecondsSince1970: started(r)).appendRFC3339(to: &out.bytes)
        literal("\",\n        \"time\" : "); number(total)
        literal(",\n        \"timings\" : {")
        if hasTiming {
            // HAR counts TLS within connect; receiving runs from the first byte to the end, waiting is the rest.
            let dns = r.dnsMs ?? -1, connect = r.connectMs ?? -1
            let receive = r.ttfbMs.map { max(0, total - $0) } ?? 0
            let wait = max(0, total - max(dns, 0) - max(connect, 0) - receive)
            literal("\n          \"blocked\" : -1,\n          \"connect\" : "); number(connect)
            literal(",\n          \"dns\" : "); number(dns)
            literal(",\n          \"receive\" : "); number(receive)
            literal(",\n          \"send\" : 0,\n          \"ssl\" : "); number(r.tlsMs ?? -1)
            literal(",\n          \"wait\" : "); number(wait)
        } else {
            literal("\n          \"receive\" : 0,\n          \"send\" : 0,\n          \"wait\" : "); number(total)
        }
        literal("\n        }\n      }")
    }

    /// HAR's `httpVersion` for an ALPN protocol id, as a JSON string; HTTP/1.1 when it is not known.
    static func httpVersion(_ alpn: RawText?) -> StaticString {
        guard let b = alpn?.bytes else { return "\"HTTP/1.1\"" }
        if b.count == 2, b[0] == UInt8(ascii: "h") {
            if b[1] == UInt8(ascii: "2") { return "\"HTTP/2\"" }
            if b[1] == UInt8(ascii: "3") { return "\"HTTP/3\"" }
        }
        if b.count == 8, b.elementsEqual("http/1.0".utf8) { return "\"HTTP/1.0\"" }
        return "\"HTTP/1.1\""
    }

    /// The standard reason phrase of a status code, or an empty string.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }

    /// `"https://host/route"` with the route percent-encoded as Foundation's `urlPathAllowed` does
    /// (every byte outside ``pathAllowed``, `{placeholders}` included, and a `:` in the first
    /// segment of a route without a leading `/`, where it would read as a scheme), so the URL is valid.
    static func appendURL(host: RawText?, route: RawText?, to out: inout JSONOutput) {
        let hostBytes = host?.bytes ?? UnsafeRawBufferPointer(start: unknownHost.utf8Start, count: unknownHost.utf8CodeUnitCount)
        let path = route?.bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)
        // The path comes out percent-encoded, JSON-safe as it is; the host is written raw when it
        // holds nothing JSON escapes (always, for a real host), else the whole URL goes through the escaper.
        guard !hostBytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            var url = JSONOutput()
            url.bytes.append(contentsOf: "https://".utf8)
            url.bytes.append(contentsOf: hostBytes)
            appendPath(path, to: &url.bytes)
            url.bytes.withUnsafeBytes { out.appendString(utf8: $0) }
            return
        }
        out.bytes.append(contentsOf: "\"https://".utf8)
        out.bytes.append(contentsOf: hostBytes)
        appendPath(path, to: &out.bytes)
        out.bytes.append(UInt8(ascii: "\""))
    }

    private static let unknownHost: StaticString = "unknown.invalid"

    /// The route as a URL path, percent-encoded (see ``appendURL(host:route:to:)``).
    private static func appendPath(_ path: UnsafeRawBufferPointer, to url: inout [UInt8]) {
        var firstSegmentOfRelative = path.first != UInt8(ascii: "/")
        if firstSegmentOfRelative { url.append(UInt8(ascii: "/")) }
        for byte in path {
            if byte == UInt8(ascii: "/") { firstSegmentOfRelative = false }
            if pathAllowed[Int(byte)] && !(firstSegmentOfRelative && byte == UInt8(ascii: ":")) {
                url.append(byte)
            } else {
                url.append(UInt8(ascii: "%"))
                url.append(hexDigits[Int(byte >> 4)])
                url.append(hexDigits[Int(byte & 15)])
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Bytes Foundation's `CharacterSet.urlPathAllowed` leaves as they are in a path: letters,
    /// digits and `!$&'()*+,-./:=@_~`.
    static let pathAllowed: [Bool] = (0..<256).map { b in
        switch UInt8(b) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!$&'()*+,-./:=@_~".utf8.contains(UInt8(b))
        }
    }

    /// A number as Foundation's JSON writer prints it: Swift's shortest round-trip text, without the
    /// `.0` of a whole number. Values of at most three decimals (every duration a trace holds) take
    /// the fast path, whose text is the same: below 10^9 the doubles are far closer together than
    /// 0.001, so no shorter decimal reads back as the same value.
    static func appendNumber(_ value: Double, to out: inout JSONOutput) {
        let thousandths = (value * 1000).rounded()
        if abs(value) < 1e9, thousandths / 1000 == value, !(value == 0 && value.sign == .minus) {
            out.appendNumber(value)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.bytes.append(contentsOf: text.utf8)
    }
}
