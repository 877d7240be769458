import APITraceFormat
import Foundation

/// Turns `request` events into an HTTP Archive (HAR 1.2) that browser devtools and HTTP tools open.
///
/// Traces hold routes, not URLs, and never headers or bodies, so entries carry what is known:
/// `https://{host}{route}` as the URL (route placeholders percent-encoded), the status, timings
/// (DNS, connect, TLS, waiting and receiving where the event has `TraceEvent.Request.Timing`,
/// otherwise all of it as waiting), the HTTP version from the protocol, body sizes, and apitrace's
/// own fields (`_route`, `_error`, `_attempt`, `_traceId`, `_session`, `_reusedConnection`).
/// A transport failure becomes status 0 with the error identity as its status text, as browsers do.
///
/// ```swift
/// var har = HARExporter()
/// TraceFileReader(path: file).forEachEvent { har.add($0) }
/// let data = har.archive()
/// ```
public struct HARExporter {
    /// Only events of this session are kept, when set.
    public var session: String?
    private var entries: [[String: Any]] = []

    /// Creates an exporter, optionally keeping one session only.
    public init(session: String? = nil) {
        self.session = session
    }

    /// Number of entries added so far.
    public var count: Int { entries.count }

    /// Adds the event when it is a request (of the chosen session); other events are ignored.
    public mutating func add(_ event: TraceEvent) {
        guard case .request(let request) = event.payload else { return }
        if let session, event.session != session { return }
        let started = event.timestamp.adding(milliseconds: -Int64(request.durationMs.rounded()))
        let failed = request.status == nil
        var entry: [String: Any] = [
            "startedDateTime": started.rfc3339,
            "time": request.durationMs,
            "request": [
                "method": request.method,
                "url": Self.url(host: request.host, route: request.route),
                "httpVersion": Self.httpVersion(request.timing?.networkProtocol),
                "cookies": [Any](),
                "headers": [Any](),
                "queryString": [Any](),
                "headersSize": -1,
                "bodySize": request.bytesOut.map(Int.init) ?? -1,
            ] as [String: Any],
            "response": [
                "status": request.status ?? 0,
                "statusText": failed ? (request.error ?? "transport error") : Self.reasonPhrase(request.status!),
                "httpVersion": Self.httpVersion(request.timing?.networkProtocol),
                "cookies": [Any](),
                "headers": [Any](),
                "content": ["size": request.bytesIn.map(Int.init) ?? 0, "mimeType": ""] as [String: Any],
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": request.bytesIn.map(Int.init) ?? -1,
            ] as [String: Any],
            "cache": [String: Any](),
            "timings": Self.timings(request),
            "_route": request.route,
            "_attempt": request.attempt,
        ]
        if let error = request.error { entry["_error"] = error }
        if let reused = request.timing?.reusedConnection { entry["_reusedConnection"] = reused }
        if let traceID = event.traceID { entry["_traceId"] = traceID }
        if let session = event.session { entry["_session"] = session }
        entries.append(entry)
    }

    /// HAR timings that add up to the duration: DNS and connect (TLS within it, as HAR counts
    /// `ssl`) where measured, receiving from the first response byte to the end, waiting the rest.
    /// Without timings, the whole duration is waiting for the server.
    static func timings(_ request: TraceEvent.Request) -> [String: Double] {
        let total = request.durationMs
        guard let t = request.timing else { return ["send": 0, "wait": total, "receive": 0] }
        let dns = t.dnsMs ?? -1, connect = t.connectMs ?? -1
        let receive = t.firstByteMs.map { max(0, total - $0) } ?? 0
        let wait = max(0, total - max(dns, 0) - max(connect, 0) - receive)
        return ["blocked": -1, "dns": dns, "connect": connect, "ssl": t.tlsMs ?? -1, "send": 0, "wait": wait, "receive": receive]
    }

    /// HAR's `httpVersion` for an ALPN protocol id; HTTP/1.1 when it is not known.
    static func httpVersion(_ alpn: String?) -> String {
        switch alpn {
        case "h2": "HTTP/2"
        case "h3": "HTTP/3"
        case "http/1.0": "HTTP/1.0"
        default: "HTTP/1.1"
        }
    }

    /// The archive as JSON, entries sorted by start time.
    public func archive(creatorVersion: String = "0.1.0") -> Data {
        let sorted = entries.sorted { ($0["startedDateTime"] as! String) < ($1["startedDateTime"] as! String) }
        let log: [String: Any] = [
            "log": [
                "version": "1.2",
                "creator": ["name": "apitrace", "version": creatorVersion],
                "entries": sorted,
            ] as [String: Any],
        ]
        return (try? JSONSerialization.data(withJSONObject: log, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    /// The standard reason phrase of a status code, or an empty string.
    static func reasonPhrase(_ status: Int) -> String {
        let phrases: [Int: String] = [
            200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 301: "Moved Permanently", 302: "Found",
            304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            409: "Conflict", 422: "Unprocessable Content", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
        ]
        return phrases[status] ?? ""
    }

    /// `https://host/route` with the route's `{placeholders}` percent-encoded so the URL is valid.
    static func url(host: String?, route: String) -> String {
        let path = route.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? route
        return "https://\(host ?? "unknown.invalid")\(path.hasPrefix("/") ? path : "/" + path)"
    }
}
