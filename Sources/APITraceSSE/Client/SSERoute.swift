/// Turns a URL path into a low-cardinality route for traces: segments that look like ids become `{id}`.
///
/// ```swift
/// SSERoute.normalize("/apps/42/events")  // "/apps/{id}/events"
/// ```
public enum SSERoute {
    /// Replaces numeric segments, UUIDs and long hex strings with `{id}`.
    public static func normalize(_ path: String) -> String {
        if path.isEmpty { return "/" }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> Substring in
            looksLikeID(segment) ? "{id}" : segment
        }
        return segments.joined(separator: "/")
    }

    private static func looksLikeID(_ segment: Substring) -> Bool {
        let utf8 = segment.utf8
        guard !utf8.isEmpty else { return false }
        if utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        let isHex: (UInt8) -> Bool = { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
        if utf8.count == 36 {
            return utf8.enumerated().allSatisfy { offset, byte in
                [8, 13, 18, 23].contains(offset) ? byte == 0x2D : isHex(byte)
            }
        }
        return utf8.count >= 16 && utf8.allSatisfy(isHex) && utf8.contains { $0 >= 0x30 && $0 <= 0x39 }
    }
}
