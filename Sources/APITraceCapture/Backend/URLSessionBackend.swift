#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation  // URLSession's types are Foundation's on Apple platforms
#endif

/// An ``HTTPBackend`` over `URLSession`, on Linux and Apple platforms.
///
/// ```swift
/// let backend = URLSessionBackend(session: .shared)
/// ```
public struct URLSessionBackend: HTTPBackend {
    /// The session requests go through.
    public let session: URLSession

    /// Creates a backend over `session`.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func perform(_ request: BackendRequest) async throws -> BackendResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        if let timeout = request.timeout { urlRequest.timeoutInterval = timeout }
        let box = CancellableTask()
        // A data task with a completion handler: the async `data(for:)` is not on every Linux Foundation.
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<BackendResponse, any Error>) in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let http = response as? HTTPURLResponse {
                        var headers: [String: String] = [:]
                        for (name, value) in http.allHeaderFields {
                            headers[String(describing: name)] = String(describing: value)
                        }
                        continuation.resume(returning: BackendResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}
