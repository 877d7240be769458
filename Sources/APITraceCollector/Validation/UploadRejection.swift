/// Why the collector refused an upload: an HTTP status, a metric label and a message for the client.
public struct UploadRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal, each counted under its own label in the metrics.
    public enum Reason: String, Sendable, CaseIterable {
        /// No `Authorization: Bearer` header (401).
        case missingToken = "missing_token"
        /// A token that matches none configured (401).
        case invalidToken = "invalid_token"
        /// The body is larger than the configured limit (413).
        case bodyTooLarge = "body_too_large"
        /// The body inflates past the configured limit: a gzip bomb (413).
        case decompressedTooLarge = "decompressed_too_large"
        /// The body is empty (400).
        case emptyBody = "empty_body"
        /// The body is not gzip, or its gzip data is corrupt (400).
        case notGzip = "not_gzip"
        /// The gzip stream stops before the end of its header line, so nothing can be kept (400).
        /// A body cut later (a killed app's file) is accepted: its complete lines are stored.
        case truncated
        /// The first line is not an apitrace header (400).
        case invalidHeader = "invalid_header"
        /// The header's format version is newer than this collector reads (400).
        case newerVersion = "newer_version"
        /// The `Content-Digest` the client sent does not match the body (400).
        case digestMismatch = "digest_mismatch"
        /// The collector's disk is full (507).
        case diskFull = "disk_full"
        /// Any other failure to store the file (500).
        case storageFailed = "storage_failed"

        /// The HTTP status answered for this reason.
        public var status: Int {
            switch self {
            case .missingToken, .invalidToken: 401
            case .bodyTooLarge, .decompressedTooLarge: 413
            case .emptyBody, .notGzip, .truncated, .invalidHeader, .newerVersion, .digestMismatch: 400
            case .diskFull: 507
            case .storageFailed: 500
            }
        }
    }

    /// The kind of refusal.
    public var reason: Reason
    /// A sentence for the client saying what was wrong.
    public var message: String

    /// Creates a rejection.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason.status) \(reason.rawValue): \(message)" }
}
