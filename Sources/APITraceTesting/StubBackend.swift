public import APITraceCapture
import APITraceFormat
public import Foundation

/// An ``HTTPBackend`` that answers with canned responses and keeps the requests it was sent, for
/// testing a client's repositories and parsers, and their traces, without a server.
///
/// Pluggable behaviour as a closure, with presets for the usual cases:
///
/// ```swift
/// let stub = StubBackend.json(#"{"data": {"apps": [{"id": 1}]}}"#)
/// let backend = TracingBackend(stub)                       // records a `request` event per call
/// let apps = try await AppsRepository(backend: backend).apps()
/// #expect(stub.requests.map(\.url.path) == ["/apps"])
/// ```
///
/// A test double by design: it stands in for the network under the code a user tests. apitrace's
/// own adapters are tested against real servers.
public struct StubBackend: HTTPBackend {
    private let respond: @Sendable (BackendRequest) async throws -> BackendResponse
    // A reference, so copies of the stub (one inside a TracingBackend, one in the test) share it.
    private let received = Locked<[BackendRequest]>([])

    /// Creates a stub answering each request with what `respond` returns or throws.
    public init(_ respond: @escaping @Sendable (BackendRequest) async throws -> BackendResponse) {
        self.respond = respond
    }

    public func perform(_ request: BackendRequest) async throws -> BackendResponse {
        received.withLock { $0.append(request) }
        return try await respond(request)
    }

    /// The requests performed so far, in order.
    public var requests: [BackendRequest] { received.withLock { $0 } }

    // MARK: - Presets

    /// Answers every request with `status`, `headers` and `body`.
    public static func status(_ status: Int, headers: [String: String] = [:], body: Data = Data()) -> StubBackend {
        let response = BackendResponse(status: status, headers: headers, body: body)
        return StubBackend { _ in response }
    }

    /// Answers every request with a JSON body (`Content-Type: application/json`) and `status`.
    public static func json(_ text: String, status: Int = 200) -> StubBackend {
        .status(status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    /// Throws `error` for every request, as a transport failure does (no response arrived).
    public static func failing(_ error: any Error) -> StubBackend {
        StubBackend { _ in throw error }
    }

    /// Answers by route: the request's route template when it has one, otherwise its URL's path;
    /// `otherwise` (404 by default) for the rest.
    ///
    /// ```swift
    /// StubBackend.routes(["/apps/{id}": BackendResponse(status: 200, body: app), "/health": BackendResponse(status: 503)])
    /// ```
    public static func routes(
        _ responses: [String: BackendResponse], otherwise: BackendResponse = BackendResponse(status: 404)
    ) -> StubBackend {
        StubBackend { request in responses[request.route ?? request.url.path] ?? otherwise }
    }

    /// Answers with each stub in turn, the last one repeating: a failure then a success tests a retry.
    ///
    /// ```swift
    /// StubBackend.sequence([.failing(URLError(.timedOut)), .status(503), .json(#"{"data": []}"#)])
    /// ```
    public static func sequence(_ stubs: [StubBackend]) -> StubBackend {
        precondition(!stubs.isEmpty, "StubBackend.sequence needs at least one stub")
        let next = Locked(0)
        return StubBackend { request in
            let index = next.withLock { index in
                defer { index = min(index + 1, stubs.count - 1) }
                return index
            }
            return try await stubs[index].respond(request)
        }
    }
}
