public import APITraceFormat
public import Foundation

/// What a ``APITracer`` hides before anything reaches a sink, a log line or an error message.
///
/// Request events carry a route template, never a URL or headers. Free text that could hold a
/// secret (error messages such as a `URLError` naming the failing URL, log lines, metadata and
/// user info values) is scanned: values of sensitive query parameters (`token=...`), sensitive
/// header lines (`Authorization: ...`), `Bearer`/`Basic` credentials and URL user info are replaced
/// with ``replacement``. Bodies are never recorded.
///
/// ```swift
/// var redaction = Redaction()
/// redaction.headerNames.insert("x-session")
/// redaction.queryParameterNames.insert("sig")
/// redaction.redactText("GET /a?token=abc&page=2")   // "GET /a?token=[REDACTED]&page=2"
/// ```
public struct Redaction: Sendable, Equatable {
    /// Header names whose values are hidden, lower case. Default: `authorization`,
    /// `proxy-authorization`, `cookie`, `set-cookie`, `x-api-key`.
    /// A header whose name contains a word of ``queryParameterNames`` (`X-Auth-Token`) is hidden too.
    public var headerNames: Set<String>
    /// Words that make a query parameter (or `name=value` pair in text) sensitive when the name,
    /// lower-cased, contains one. Default: `token`, `key`, `password`, `signature`, `secret`.
    public var queryParameterNames: Set<String>
    /// What replaces a hidden value. Default `[REDACTED]`.
    public var replacement: String

    /// The default header names.
    public static let defaultHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"]
    /// The default query parameter words.
    public static let defaultQueryParameterNames: Set<String> = ["token", "key", "password", "signature", "secret"]

    /// Creates a redaction policy; names are matched case-insensitively.
    public init(
        headerNames: Set<String> = Redaction.defaultHeaderNames,
        queryParameterNames: Set<String> = Redaction.defaultQueryParameterNames,
        replacement: String = "[REDACTED]"
    ) {
        self.headerNames = Set(headerNames.map { $0.lowercased() })
        self.queryParameterNames = Set(queryParameterNames.map { $0.lowercased() })
        self.replacement = replacement
    }

    /// Whether a header's value must be hidden.
    package func isSensitiveHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        return headerNames.contains(lower) || isSensitiveParameter(lower)
    }

    /// Whether the value after `name:` in free text must be hidden: a sensitive header, or a name
    /// ending with a sensitive word (`X-Auth-Token`, `apiKey`). Unlike query parameters, a word
    /// inside the name does not count, so `keyNotFound: ...` in an error message stays readable.
    package func isSensitiveLabel(_ name: String) -> Bool {
        let lower = name.lowercased()
        return headerNames.contains(lower) || queryParameterNames.contains { lower.hasSuffix($0) }
    }

    /// Whether a query parameter's value must be hidden.
    package func isSensitiveParameter(_ name: String) -> Bool {
        let lower = Array(name.lowercased().utf8)
        for word in queryParameterNames where Self.contains(lower, Array(word.utf8)) { return true }
        return false
    }

    /// Byte substring search; Foundation's `contains` goes through `NSString` on Linux.
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) {
            var k = 0
            while k < needle.count, haystack[start + k] == needle[k] { k += 1 }
            if k == needle.count { return true }
        }
        return false
    }

    /// Headers with every sensitive value replaced.
    public func redact(headers: [String: String]) -> [String: String] {
        var result = headers
        for name in headers.keys where isSensitiveHeader(name) { result[name] = replacement }
        return result
    }

    /// The URL as text with user info removed and sensitive query values replaced.
    public func redact(url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return redactText(url.absoluteString)
        }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        // Built by hand: the replacement's brackets are not valid in a percent-encoded query.
        let query = components.percentEncodedQuery
        let fragment = components.percentEncodedFragment
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        // Paths carry secrets too: matrix parameters (`;jsessionid=...`) and token segments go.
        // Built by hand for the same reason.
        let path = components.percentEncodedPath
        components.percentEncodedPath = ""
        guard var text = components.string else { return redactText(url.absoluteString) }
        if !path.isEmpty {
            let normalizer = RouteNormalizer()
            text += redact(route: path).split(separator: "/", omittingEmptySubsequences: false).map { segment in
                !segment.isEmpty && !segment.allSatisfy(\.isNumber) && normalizer.isID(segment) ? replacement : String(segment)
            }.joined(separator: "/")
        }
        if let query {
            text += "?" + redactText(query)
        }
        if let fragment { text += "#" + redactText(fragment) }
        return text
    }

    /// Whether the value under a metadata or user-info key must be hidden: a sensitive header name
    /// (`cookie`, `authorization`, `proxy-authorization`, ...) or a name containing a sensitive word.
    package func isSensitiveKey(_ name: String) -> Bool {
        isSensitiveHeader(name)
    }

    /// A metadata or user-info value: hidden under a sensitive key, its text redacted otherwise.
    package func redact(value: String, forKey key: String) -> String {
        isSensitiveKey(key) ? replacement : redactText(value)
    }

    /// Metadata or user info with each value redacted as ``redact(value:forKey:)`` does.
    package func redact(values: [String: String]) -> [String: String] {
        redactedIfNeeded(values) ?? values
    }

    /// `values` redacted, or `nil` when nothing in them is hidden: no copy of clean metadata.
    private func redactedIfNeeded(_ values: [String: String]) -> [String: String]? {
        var safe: [String: String]?
        for (key, value) in values {
            let redacted = redact(value: value, forKey: key)
            if redacted != value {
                if safe == nil { safe = values }
                safe?[key] = redacted
            }
        }
        return safe
    }

    /// `text` redacted, or `nil` when it has nothing to hide (`redactText` then returns it unchanged).
    private func redactedIfNeeded(_ text: String) -> String? {
        let redacted = redactText(text)
        return redacted == text ? nil : redacted
    }

    /// `route` redacted, or `nil` when it has no query, fragment or matrix parameter.
    private func redactedIfNeeded(route: String) -> String? {
        Self.mayCarrySecret(route: route) ? redact(route: route) : nil
    }

    /// A route with anything that can carry a secret removed: the query string, the fragment and
    /// matrix parameters such as `;jsessionid=...`.
    public func redact(route: String) -> String {
        guard Self.mayCarrySecret(route: route) else { return route }
        var out = ""
        var skipping = false
        for c in route {
            if c == "?" || c == "#" { break }
            if c == ";" { skipping = true; continue }
            if c == "/" { skipping = false }
            if !skipping { out.append(c) }
        }
        return out.isEmpty ? "/" : out
    }

    /// Whether `route` has a query, a fragment or matrix parameters. Runs on every request: a plain
    /// loop over the contiguous bytes, as the generic `utf8.contains(where:)` costs ten times more.
    @inline(__always)
    static func mayCarrySecret(route: String) -> Bool {
        let scanned = route.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: ";") {
                return true
            }
            return false
        }
        return scanned ?? route.utf8.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: ";") }
    }

    /// Rewrites the free-text fields of an event (messages, metadata, user info, `sse` reasons and
    /// last event ids) and strips query strings and matrix parameters from routes.
    ///
    /// Every event goes through here on the caller's thread, so a payload is copied and rewritten
    /// only when one of its fields changes: a clean event (most of them) costs the scans alone.
    public func redact(_ event: inout TraceEvent) {
        if let payload = redactedPayload(event.payload) { event.payload = payload }
    }

    /// The payload with its secrets removed, or `nil` when it has none (then nothing is written back).
    private func redactedPayload(_ payload: borrowing TraceEvent.Payload) -> TraceEvent.Payload? {
        switch payload {
        case .request(let request):
            if let route = redactedIfNeeded(route: request.route) {
                var redacted = request
                redacted.route = route
                return .request(redacted)
            }
        case .error(let error):
            let message = redactedIfNeeded(error.message)
            let userInfo = redactedIfNeeded(error.userInfo)
            let route = error.route.flatMap { redactedIfNeeded(route: $0) }
            if message != nil || userInfo != nil || route != nil {
                var redacted = error
                redacted.message = message ?? error.message
                redacted.userInfo = userInfo ?? error.userInfo
                redacted.route = route ?? error.route
                return .error(redacted)
            }
        case .log(let log):
            let message = redactedIfNeeded(log.message)
            let metadata = redactedIfNeeded(log.metadata)
            if message != nil || metadata != nil {
                var redacted = log
                redacted.message = message ?? log.message
                redacted.metadata = metadata ?? log.metadata
                return .log(redacted)
            }
        case .decodeFailure(let failure):
            let message = redactedIfNeeded(failure.message)
            let route = failure.route.flatMap { redactedIfNeeded(route: $0) }
            if message != nil || route != nil {
                var redacted = failure
                redacted.message = message ?? failure.message
                redacted.route = route ?? failure.route
                return .decodeFailure(redacted)
            }
        case .sse(let sse):
            let route = redactedIfNeeded(route: sse.route)
            let reason = sse.reason.flatMap { redactedIfNeeded($0) }
            let lastEventID = sse.lastEventID.flatMap { redactedIfNeeded($0) }
            if route != nil || reason != nil || lastEventID != nil {
                var redacted = sse
                redacted.route = route ?? sse.route
                redacted.reason = reason ?? sse.reason
                redacted.lastEventID = lastEventID ?? sse.lastEventID
                return .sse(redacted)
            }
        case .websocket(let webSocket):
            // Only the route can carry a secret: reasons are classes the client chose, never the
            // peer's close text, and no message content is recorded.
            if let route = redactedIfNeeded(route: webSocket.route) {
                var redacted = webSocket
                redacted.route = route
                return .websocket(redacted)
            }
        case .dropped:
            break
        }
        return nil
    }
}
