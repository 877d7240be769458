public import APITraceCapture
public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Jayme-style repository over a ``FutureBackend``: names its endpoints and decodes their bodies.
public struct FutureNewsRepository: Sendable {
    /// A news item.
    public struct News: Decodable, Sendable, Equatable {
        public var id: Int
        public var title: String
    }

    struct Envelope<Payload: Decodable>: Decodable {
        var data: Payload
    }

    /// Thrown for a status other than 2xx.
    public struct StatusError: Error, Equatable {
        public var status: Int
    }

    let baseURL: URL
    let backend: any FutureBackend
    let decoder: TracedJSONDecoder

    /// Creates the repository; requests go through `backend`.
    public init(baseURL: URL, backend: any FutureBackend, tracer: APITracer = .shared) {
        self.baseURL = baseURL
        self.backend = backend
        self.decoder = TracedJSONDecoder(tracer: tracer)
    }

    /// `GET /news/{id}`.
    public func read(id: Int) -> Future<News, any Error> {
        let decoder = self.decoder
        let request = URLRequest(url: baseURL.appendingPathComponent("news/\(id)"))
        return Future { completion in
            backend.future(for: request).start { result in
                completion(result.flatMap { data, response in
                    guard (200..<300).contains(response.statusCode) else { return .failure(StatusError(status: response.statusCode)) }
                    return Result { try decoder.decode(Envelope<News>.self, from: data, route: "/news/{id}").data }
                })
            }
        }
    }
}
