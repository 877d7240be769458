/// The collector cannot start: no token, an unusable folder, a bad listen address.
public struct CollectorSetupError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do about it.
    public var description: String

    /// Creates an error with a message saying what to do.
    public init(_ description: String) { self.description = description }
}
