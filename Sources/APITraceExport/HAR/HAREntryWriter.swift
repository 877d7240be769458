import APITraceFormat

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

    /// Appends the entry of a `request` record (indented for the `entries` array).
    package static func append(_ r: TraceRecord, to out: inout JSONOutput) {
        let total = r.durationMs ?? 0
        let failed = r.status == nil
        let hasTiming = r.dnsMs != nil || r.connectMs != nil || r.tlsMs != nil || r.ttfbMs != nil || r.networkProtocol != nil || r.reused != nil
        let version = httpVersion(r.networkProtocol)
        func key(_ name: StaticString, _ indent: Int) {
            out.bytes.append(0x0A)
            for _ in 0..<indent { out.bytes.append(0x20) }
            out.bytes.append(UInt8(ascii: "\""))
            out.bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.bytes.append(contentsOf: [UInt8(ascii: "\""), 0x20, UInt8(ascii: ":"), 0x20])
        }
        func literal(_ text: StaticString) { out.bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
        func text(_ t: RawText?) { if let t { out.appendString(utf8: t.bytes) } else { literal("\"\"") } }
        func int(_ v: Int64) { out.appendInteger(v) }
        func number(_ v: Double) { appendNumber(v, to: &out) }

        literal("      {")
        key("_attempt", 8); int(r.attempt ?? 1); literal(",")
        if let error = r.error { key("_error", 8); text(error); literal(",") }
        if let reused = r.reused { key("_reusedConnection", 8); literal(reused ? "true" : "false"); literal(",") }
        key("_route", 8); text(r.route); literal(",")
        if let session = r.session { key("_session", 8); text(session); literal(",") }
        if let traceID = r.traceID { key("_traceId", 8); text(traceID); literal(",") }
        key("cache", 8); literal("{\n\n        },")
        key("request", 8); literal("{")
        key("bodySize", 10); int(r.bytesOut ?? -1); literal(",")
        key("cookies", 10); literal("[\n\n          ],")
        key("headers", 10); literal("[\n\n          ],")
        key("headersSize", 10); literal("-1,")
        key("httpVersion", 10); literal(version); literal(",")
        key("method", 10); text(r.method); literal(",")
        key("queryString", 10); literal("[\n\n          ],")
        key("url", 10); appendURL(host: r.host, route: r.route, to: &out)
        literal("\n        },")
        key("response", 8); literal("{")
        key("bodySize", 10); int(r.bytesIn ?? -1); literal(",")
        key("content", 10); literal("{")
        key("mimeType", 12); literal("\"\",")
        key("size", 12); int(r.bytesIn ?? 0)
        literal("\n          },")
        key("cookies", 10); literal("[\n\n          ],")
        key("headers", 10); literal("[\n\n          ],")
        key("headersSize", 10); literal("-1,")
        key("httpVersion", 10); literal(version); literal(",")
        key("redirectURL", 10); literal("\"\",")
        key("status", 10); int(Int64(r.status ?? 0)); literal(",")
        key("statusText", 10)
        if failed {
            if let error = r.error { text(error) } else { literal("\"transport error\"") }
        } else {
            out.bytes.append(UInt8(ascii: "\""))
            out.bytes.append(contentsOf: reasonPhrase(r.status!).utf8)
            out.bytes.append(UInt8(ascii: "\""))
        }
        literal("\n        },")
        key("startedDateTime", 8)
        out.bytes.append(UInt8(ascii: "\""))
        TraceTimestamp(millisecondsSince1970: started(r)).appendRFC3339(to: &out.bytes)
        literal("\",")
        key("time", 8); number(total); literal(",")
        key("timings", 8); literal("{")
        if hasTiming {
            // HAR counts TLS within connect; receiving runs from the first byte to the end, waiting is the rest.
            let dns = r.dnsMs ?? -1, connect = r.connectMs ?? -1
            let receive = r.ttfbMs.map { max(0, total - $0) } ?? 0
            let wait = max(0, total - max(dns, 0) - max(connect, 0) - receive)
            key("blocked", 10); literal("-1,")
            key("connect", 10); number(connect); literal(",")
            key("dns", 10); number(dns); literal(",")
            key("receive", 10); number(receive); literal(",")
            key("send", 10); literal("0,")
            key("ssl", 10); number(r.tlsMs ?? -1); literal(",")
            key("wait", 10); number(wait)
        } else {
            key("receive", 10); literal("0,")
            key("send", 10); literal("0,")
            key("wait", 10); number(total)
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
        var url: [UInt8] = Array("https://".utf8)
        if let host { url.append(contentsOf: host.bytes) } else { url.append(contentsOf: "unknown.invalid".utf8) }
        let path = route?.bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)
        var firstSegmentOfRelative = path.first != UInt8(ascii: "/")
        if firstSegmentOfRelative { url.append(UInt8(ascii: "/")) }
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in path {
            if byte == UInt8(ascii: "/") { firstSegmentOfRelative = false }
            if pathAllowed[Int(byte)] && !(firstSegmentOfRelative && byte == UInt8(ascii: ":")) {
                url.append(byte)
            } else {
                url.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            }
        }
        url.withUnsafeBytes { out.appendString(utf8: $0) }
    }

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
