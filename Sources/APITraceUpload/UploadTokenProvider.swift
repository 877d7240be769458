/// Where the uploader gets the bearer token it sends: a fixed string, or the app's own code that
/// can refresh it.
///
/// The provider is asked before every upload. After the collector refuses a token (401 or 403),
/// the next call gets that token as `refused`, so the app can fetch a new one; when it returns a
/// different token, the uploader tries it at once instead of waiting out its longest backoff.
///
/// ```swift
/// let tokens = UploadTokenProvider { refused in
///     if refused != nil { try await session.refreshUploadToken() }
///     return try await session.uploadToken()
/// }
/// ```
public struct UploadTokenProvider: Sendable {
    private let fetch: @Sendable (_ refused: String?) async throws -> String

    /// Creates a provider from the app's code; `refused` is the token the collector last refused, if any.
    public init(_ fetch: @escaping @Sendable (_ refused: String?) async throws -> String) {
        self.fetch = fetch
    }

    /// Always the same token.
    public static func constant(_ token: String) -> UploadTokenProvider {
        UploadTokenProvider { _ in token }
    }

    /// The token to send; `refused` is the one the collector last refused.
    public func token(refused: String? = nil) async throws -> String {
        try await fetch(refused)
    }
}
