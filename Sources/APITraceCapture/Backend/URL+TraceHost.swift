import Foundation

extension URL {
    /// The host as written in the URL, read straight from the text: `URL.host` percent-decodes
    /// through a full parse, which costs a few hundred nanoseconds per request.
    var traceHost: String? {
        var text = absoluteString
        return text.withUTF8 { Self.host(in: $0) } ?? host
    }

    /// The server port: the URL's own, or the one its scheme implies (443 for https and wss, 80 for http and ws).
    var tracePort: Int? {
        if let port { return port }
        switch scheme?.lowercased() {
        case "https", "wss": return 443
        case "http", "ws": return 80
        default: return nil
        }
    }

    /// The route for this URL's path: the path read straight from the text and normalized,
    /// or Foundation's decoded `path` when the text has percent escapes.
    func traceRoute(_ normalizer: RouteNormalizer) -> String {
        var text = absoluteString
        let route: String? = text.withUTF8 { bytes in
            guard let start = Self.pathStart(in: bytes) else { return nil }
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
            // Like Foundation's `path`: no trailing slash.
            if end - start > 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
            let rest = UnsafeBufferPointer(rebasing: bytes[start..<end])
            if rest.contains(UInt8(ascii: "%")) { return nil }
            return normalizer.normalize(bytes: rest)
        }
        return route ?? normalizer.normalize(path)
    }

    /// Where the path starts: after `scheme://authority`.
    private static func pathStart(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = bytes.count
        while i + 2 < n, bytes[i] != UInt8(ascii: ":") {
            if bytes[i] == UInt8(ascii: "/") { return nil }
            i += 1
        }
        guard i + 2 < n, bytes[i + 1] == UInt8(ascii: "/"), bytes[i + 2] == UInt8(ascii: "/") else { return nil }
        var end = i + 3
        while end < n, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        return end
    }

    private static func host(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let n = bytes.count
        var i = 0
        // scheme "://"
        while i + 2 < n, bytes[i] != UInt8(ascii: ":") {
            if bytes[i] == UInt8(ascii: "/") || bytes[i] == UInt8(ascii: "?") { return nil }
            i += 1
        }
        guard i + 2 < n, bytes[i + 1] == UInt8(ascii: "/"), bytes[i + 2] == UInt8(ascii: "/") else { return nil }
        var start = i + 3
        var end = start
        // Authority ends at '/', '?' or '#'; user info ends at the last '@' inside it.
        while end < n, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            if bytes[end] == UInt8(ascii: "@") { start = end + 1 }
            if bytes[end] == UInt8(ascii: "%") { return nil }  // leave decoding to Foundation
            end += 1
        }
        if start < end, bytes[start] == UInt8(ascii: "[") {
            // IPv6 literal: Foundation's `host` drops the brackets.
            var close = start
            while close < end, bytes[close] != UInt8(ascii: "]") { close += 1 }
            guard close < end else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[(start + 1)..<close]), as: UTF8.self)
        }
        var hostEnd = start
        while hostEnd < end, bytes[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        guard hostEnd > start else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<hostEnd]), as: UTF8.self)
    }
}
