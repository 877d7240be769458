/// Performs HTTP requests: the layer under an API client's repositories, like Jayme's backend.
///
/// Implement it over any transport, or use ``URLSessionBackend``. Wrap any backend in
/// ``TracingBackend`` to record one `request` event per request.
///
/// ```swift
/// let backend = TracingBackend(URLSessionBackend(), tracer: .shared)
/// let response = try await backend.perform(BackendRequest(method: "GET", url: url, route: "/apps/{id}"))
/// ```
public protocol HTTPBackend: Sendable {
    /// Sends `request` and returns the response, whatever its status. Throws only when no response arrived.
    func perform(_ request: BackendRequest) async throws -> BackendResponse
}
