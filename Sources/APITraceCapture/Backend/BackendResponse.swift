public import Foundation

/// The response an ``HTTPBackend`` returns.
public struct BackendResponse: Sendable {
    /// HTTP status code.
    public var status: Int
    /// Header fields, names as sent by the server.
    public var headers: [String: String]
    /// Body bytes.
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
