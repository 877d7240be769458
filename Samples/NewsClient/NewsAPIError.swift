/// What the sample client's repositories throw besides transport and decoding errors.
public enum NewsAPIError: Error, Sendable, Equatable {
    /// The server answered with an error status.
    case server(status: Int)
    /// The item does not exist.
    case notFound
}
