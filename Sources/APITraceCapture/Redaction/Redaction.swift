import APITraceFormat
import Foundation

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
        guard !values.isEmpty else { return values }
        var safe = values
        for (key, value) in values { safe[key] = redact(value: value, forKey: key) }
        return safe
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
    public func redact(_ event: inout TraceEvent) {
        switch event.payload {
        case .request(let request):
            // Copied only when the route changes: every traced request comes through here.
            if Self.mayCarrySecret(route: request.route) {
                var redacted = request
                redacted.route = redact(route: request.route)
                event.payload = .request(redacted)
            }
        case .error(var error):
            error.message = redactText(error.message)
            error.userInfo = redact(values: error.userInfo)
            if let route = error.route { error.route = redact(route: route) }
            event.payload = .error(error)
        case .log(var log):
            log.message = redactText(log.message)
            log.metadata = redact(values: log.metadata)
            event.payload = .log(log)
        case .decodeFailure(var failure):
            failure.message = redactText(failure.message)
            if let route = failure.route { failure.route = redact(route: route) }
            event.payload = .decodeFailure(failure)
        case .sse(var sse):
            sse.route = redact(route: sse.route)
            if let reason = sse.reason { sse.reason = redactText(reason) }
            if let id = sse.lastEventID { sse.lastEventID = redactText(id) }
            event.payload = .sse(sse)
        case .dropped:
            break
        }
    }
}
