public import APITraceCapture
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A Jayme-style backend: performs a request and returns a ``Future`` of the body and response.
public protocol FutureBackend: Sendable {
    /// Starts `request` when the future is started.
    func future(for request: URLRequest) -> Future<(Data, HTTPURLResponse), any Error>
}

/// A ``FutureBackend`` over `URLSession` completion-handler tasks.
public struct URLSessionFutureBackend: FutureBackend {
    /// The session requests go through.
    public let session: URLSession

    /// Creates a backend over `session`.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func future(for request: URLRequest) -> Future<(Data, HTTPURLResponse), any Error> {
        let session = self.session
        return Future { completion in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    completion(.failure(error))
                } else if let http = response as? HTTPURLResponse {
                    completion(.success((data ?? Data(), http)))
                } else {
                    completion(.failure(URLError(.badServerResponse)))
                }
            }.resume()
        }
    }
}

/// Wraps any ``FutureBackend`` and records one `request` event per request, through apitrace's
/// one request lifecycle (``TracedRequest``): the wrapper to copy for a Jayme backend.
///
/// ```swift
/// let backend = TracingFutureBackend(URLSessionFutureBackend(), tracer: .shared, route: { _ in "/news/{id}" })
/// backend.future(for: URLRequest(url: url)).start { result in ... }
/// ```
///
/// The clock starts when the future starts, not when it is made.
public struct TracingFutureBackend<Base: FutureBackend>: FutureBackend {
    /// The backend doing the work.
    public let base: Base
    /// Where events go.
    public let tracer: APITracer
    /// The route template for a request; `nil` normalizes the path.
    public let route: @Sendable (URLRequest) -> String?

    /// Wraps `base`.
    public init(_ base: Base, tracer: APITracer = .shared, route: @escaping @Sendable (URLRequest) -> String? = { _ in nil }) {
        self.base = base
        self.tracer = tracer
        self.route = route
    }

    public func future(for request: URLRequest) -> Future<(Data, HTTPURLResponse), any Error> {
        let base = self.base
        let tracer = self.tracer
        let route = self.route(request)
        return Future { completion in
            var request = request
            let traced = tracer.startRequest(
                method: request.httpMethod ?? "GET", url: request.url!, route: route,
                bytesOut: Int64(request.httpBody?.count ?? 0), traceParent: request.value(forHTTPHeaderField: "traceparent"),
                injectsTraceParent: true
            )
            if let header = traced.traceParentHeader { request.setValue(header, forHTTPHeaderField: "traceparent") }
            base.future(for: request).start { result in
                switch result {
                case .success(let (data, response)):
                    traced.finish(status: response.statusCode, bytesIn: Int64(data.count))
                case .failure(let error):
                    traced.fail(error)
                }
                completion(result)
            }
        }
    }
}
