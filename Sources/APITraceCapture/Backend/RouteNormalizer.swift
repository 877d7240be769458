/// Turns a concrete path into a low-cardinality route by replacing ids with `{id}`.
///
/// A segment is an id when it is all digits, a UUID, at least ``minimumHexLength`` hex digits, or a
/// random-looking token of at least ``minimumTokenLength`` characters (letters and at least two digits,
/// mixed case or without separators). The query string, the fragment and matrix parameters
/// (`;jsessionid=...`) are dropped.
///
/// ```swift
/// RouteNormalizer().normalize("/apps/42/builds/3f2a9c1e0b7d4e5f6a7b")   // "/apps/{id}/builds/{id}"
/// RouteNormalizer().normalize("/users/6F9619FF-8B86-D011-B42D-00CF4FC964FF?page=2") // "/users/{id}"
/// ```
public struct RouteNormalizer: Sendable, Equatable {
    /// Shortest run of hex digits taken for an id. Default 16.
    public var minimumHexLength: Int
    /// What replaces an id. Default `{id}`.
    public var placeholder: String
    /// Shortest segment taken for a random token (letters and digits, neither hex nor a UUID). Default 20.
    public var minimumTokenLength: Int = 20

    /// Creates a normalizer.
    public init(minimumHexLength: Int = 16, placeholder: String = "{id}") {
        self.minimumHexLength = minimumHexLength
        self.placeholder = placeholder
    }

    /// The route for `path`.
    public func normalize(_ path: String) -> String {
        var path = path
        return path.withUTF8 { normalize(bytes: $0) }
    }

    /// The route for the path in `bytes`, stopping at `?` or `#`.
    func normalize(bytes: UnsafeBufferPointer<UInt8>) -> String {
        var end = 0
        while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        if end == 0 { return "/" }
        // Matrix parameters (`;jsessionid=...`) can carry session ids: drop them before anything else.
        if UnsafeBufferPointer(rebasing: bytes[0..<end]).contains(UInt8(ascii: ";")) {
            var stripped: [UInt8] = []
            stripped.reserveCapacity(end)
            var skipping = false
            for b in bytes[0..<end] {
                if b == UInt8(ascii: ";") { skipping = true } else if b == UInt8(ascii: "/") { skipping = false }
                if !skipping { stripped.append(b) }
            }
            return stripped.withUnsafeBufferPointer { normalize(bytes: $0) }
        }
        // Most paths with an id are short: the route is built in a temporary buffer (on the stack
        // when small) and becomes a string once, which is a small string with no allocation up to
        // 15 bytes. Each id segment has at least one byte and becomes `placeholder`, so the route
        // is at most `end * max(placeholder bytes, 1)` bytes.
        var placeholder = self.placeholder
        return placeholder.withUTF8 { placeholder in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: end * max(placeholder.count, 1)) { output in
                var written = 0
                func append(_ part: UnsafeBufferPointer<UInt8>) {
                    guard let base = part.baseAddress, !part.isEmpty else { return }
                    (output.baseAddress! + written).update(from: base, count: part.count)
                    written += part.count
                }
                var copied = 0  // bytes[0..<copied] are already accounted for in `output`
                var segmentStart = 0
                var index = 0
                while index <= end {
                    if index == end || bytes[index] == UInt8(ascii: "/") {
                        if index > segmentStart, isID(UnsafeBufferPointer(rebasing: bytes[segmentStart..<index])) {
                            append(UnsafeBufferPointer(rebasing: bytes[copied..<segmentStart]))
                            append(placeholder)
                            copied = index
                        }
                        segmentStart = index + 1
                    }
                    index += 1
                }
                append(UnsafeBufferPointer(rebasing: bytes[copied..<end]))
                return String(decoding: UnsafeBufferPointer(rebasing: output[0..<written]), as: UTF8.self)
            }
        }
    }

    /// Whether a path segment looks like an id.
    public func isID(_ segment: Substring) -> Bool {
        var text = String(segment)
        return text.withUTF8 { isID($0) }
    }

    func isID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        var digits = 0
        var hex = 0
        var dashes = 0
        var upper = 0
        var lower = 0
        var separators = 0
        for b in bytes {
            switch b {
            case 0x30...0x39: digits += 1; hex += 1
            case 0x41...0x46: hex += 1; upper += 1
            case 0x61...0x66: hex += 1; lower += 1
            case 0x47...0x5A: upper += 1
            case 0x67...0x7A: lower += 1
            case UInt8(ascii: "-"): dashes += 1
            case UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "="): separators += 1
            default: return false
            }
        }
        if digits == bytes.count { return true }
        if dashes == 4, bytes.count == 36, hex == 32 { return isUUIDShape(bytes) }
        if dashes == 0, separators == 0, hex == bytes.count { return hex >= minimumHexLength && digits > 0 }
        // A long random token (session ids, base64url, API keys): letters and digits, and either
        // mixed case or no separators, which words, slugs and dates (`release-notes-2024`) do not have.
        guard bytes.count >= minimumTokenLength, digits >= 2, upper + lower >= 2 else { return false }
        return (upper > 0 && lower > 0) || dashes + separators == 0
    }

    private func isUUIDShape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        for b in bytes {
            let dash = index == 8 || index == 13 || index == 18 || index == 23
            if dash != (b == UInt8(ascii: "-")) { return false }
            index += 1
        }
        return true
    }
}
