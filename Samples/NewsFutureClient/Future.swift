/// A minimal Jayme-style future: work that starts when asked and completes once with a result.
///
/// Jayme's backends return `Future<(Data?, URLResponse?), JaymeError>`; this sample keeps the same
/// shape without depending on Jayme, which is not installable here.
public struct Future<Value: Sendable, Failure: Error>: Sendable {
    /// Starts the work; the closure is called exactly once.
    public let start: @Sendable (@escaping @Sendable (Result<Value, Failure>) -> Void) -> Void

    /// Creates a future from the work it runs.
    public init(_ start: @escaping @Sendable (@escaping @Sendable (Result<Value, Failure>) -> Void) -> Void) {
        self.start = start
    }

    /// A future that transforms this one's value.
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Value) -> Other) -> Future<Other, Failure> {
        Future<Other, Failure> { completion in
            start { result in completion(result.map(transform)) }
        }
    }
}
