/// Turns a concrete path into a low-cardinality route by replacing ids with `{id}`.
///
/// A segment is an id when it is all digits, a UUID, or at least ``minimumHexLength`` hex digits.
/// The query string and fragment are dropped.
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

    /// Creates a normalizer.
    public init(minimumHexLength: Int = 16, placeholder: String = "{id}") {
        self.minimumHexLength = minimumHexLength
        self.placeholder = placeholder
    }

    /// The route for `path`.
    public func normalize(_ path: String) -> String {
        var segments: [Substring] = []
        var changed = false
        var rest = Substring(path)
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            rest = rest[..<end]
            changed = true
        }
        for segment in rest.split(separator: "/", omittingEmptySubsequences: false) {
            if isID(segment) {
                segments.append(Substring(placeholder))
                changed = true
            } else {
                segments.append(segment)
            }
        }
        if rest.isEmpty { return "/" }
        return changed ? segments.joined(separator: "/") : String(rest)
    }

    /// Whether a path segment looks like an id.
    public func isID(_ segment: Substring) -> Bool {
        let bytes = segment.utf8
        guard !bytes.isEmpty else { return false }
        var digits = 0
        var hex = 0
        var dashes = 0
        for b in bytes {
            switch b {
            case 0x30...0x39: digits += 1; hex += 1
            case 0x41...0x46, 0x61...0x66: hex += 1
            case UInt8(ascii: "-"): dashes += 1
            default: return false
            }
        }
        if digits == bytes.count { return true }
        if dashes == 4, bytes.count == 36, hex == 32 { return isUUIDShape(bytes) }
        return dashes == 0 && hex >= minimumHexLength && digits > 0
    }

    private func isUUIDShape(_ bytes: Substring.UTF8View) -> Bool {
        var index = 0
        for b in bytes {
            let dash = index == 8 || index == 13 || index == 18 || index == 23
            if dash != (b == UInt8(ascii: "-")) { return false }
            index += 1
        }
        return true
    }
}
