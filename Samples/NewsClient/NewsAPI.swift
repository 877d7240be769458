public import APITraceCapture
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The sample client's backend: every request goes through apitrace's tracing decorator, and
/// every response is decoded through apitrace's traced decoder, as a user would set it up.
public struct NewsAPI: Sendable {
    /// Where the API lives, such as `http://127.0.0.1:8080`.
    public let baseURL: URL
    let backend: TracingBackend<URLSessionBackend>
    let decoder: TracedJSONDecoder

    /// Creates the API client; events go to `tracer`.
    public init(baseURL: URL, tracer: APITracer = .shared, session: URLSession = .shared) {
        self.baseURL = baseURL
        backend = TracingBackend(URLSessionBackend(session: session), tracer: tracer, injectsTraceParent: true)
        decoder = TracedJSONDecoder(tracer: tracer)
    }

    /// `GET path`, decoding the `data` envelope into `Payload`. `route` is the template traces show.
    func get<Payload: Decodable>(_ path: String, route: String, as: Payload.Type = Payload.self) async throws -> Payload {
        let url = baseURL.appendingPathComponent(String(path.dropFirst()))
        let response = try await backend.perform(BackendRequest(url: url, route: route, timeout: 5))
        switch response.status {
        case 200..<300: return try decoder.decode(Envelope<Payload>.self, from: response.body, route: route).data
        case 404: throw NewsAPIError.notFound
        default: throw NewsAPIError.server(status: response.status)
        }
    }
}
