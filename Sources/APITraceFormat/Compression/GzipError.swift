import CZlib

/// A gzip stream that zlib could not set up or decode.
public struct GzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// zlib could not be initialised (out of memory).
        case initialization
        /// The bytes are not a gzip stream, or are corrupt (bad header, bad data, bad checksum).
        case corrupt
        /// The stream ended before the end of its last gzip member.
        case truncated
    }

    /// What went wrong.
    public var kind: Kind
    /// Offset in the compressed bytes where the problem was found.
    public var offset: Int
    /// zlib's status code, when zlib reported one.
    public var zlibStatus: Int32?
    /// zlib's message, when it gave one.
    public var zlibMessage: String?

    public init(kind: Kind, offset: Int, zlibStatus: Int32? = nil, zlibMessage: String? = nil) {
        self.kind = kind
        self.offset = offset
        self.zlibStatus = zlibStatus
        self.zlibMessage = zlibMessage
    }

    public var description: String {
        switch kind {
        case .initialization: "zlib could not start (status \(zlibStatus ?? 0))"
        case .corrupt: "corrupt gzip data at byte \(offset)" + (zlibMessage.map { " (\($0))" } ?? "")
        case .truncated: "truncated at byte \(offset)"
        }
    }
}
