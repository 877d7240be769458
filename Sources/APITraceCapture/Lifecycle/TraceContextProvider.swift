/// Finds the caller's distributed-trace context, so the requests it makes join that trace instead
/// of starting new ones.
///
/// `APITraceDistributedTracing` provides one that reads `ServiceContext.current` through the
/// bootstrapped instrument; any closure works:
///
/// ```swift
/// configuration.traceContext = TraceContextProvider { myCurrentSpan.map { TraceParent(traceID: $0.traceID, parentID: $0.spanID) } }
/// ```
public struct TraceContextProvider: Sendable {
    /// The context of the code running now, or `nil` outside any trace.
    public var current: @Sendable () -> TraceParent?

    /// Creates a provider from a closure.
    public init(current: @escaping @Sendable () -> TraceParent?) {
        self.current = current
    }
}
