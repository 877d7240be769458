/// Adopt to choose how an error is identified in traces and which errors it wraps.
///
/// Both requirements have defaults, so adopt only what you need:
///
/// ```swift
/// struct SyncError: TraceableError {
///     var cause: any Error
///     var traceIdentity: String { "SyncError.failed" }
///     var underlyingErrors: [any Error] { [cause] }
/// }
/// ```
public protocol TraceableError: Error {
    /// Stable identity written as `identity`; keep it free of ids and values. Default: computed as for any error.
    var traceIdentity: String { get }
    /// Errors this one wraps, outermost first; their identities are written as `underlying`. Default: none.
    var underlyingErrors: [any Error] { get }
}

extension TraceableError {
    public var traceIdentity: String { ErrorIdentity.reflectedIdentity(of: self) }
    public var underlyingErrors: [any Error] { [] }
}
