import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds and sends the `POST` of one trace file.
enum UploadRequest {
    static func make(endpoint: URL, token: String, producer: String?, body: Data, timeout: Duration) -> URLRequest {
        var request = URLRequest(url: endpoint)
        request.httpMethod = "POST"
        request.timeoutInterval = RetryPolicy.seconds(timeout)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/gzip", forHTTPHeaderField: "Content-Type")
        request.setValue("sha-256=:\(Data(SHA256.hash(data: body)).base64EncodedString()):", forHTTPHeaderField: "Content-Digest")
        if let producer { request.setValue(producer, forHTTPHeaderField: "X-APITrace-Producer") }
        return request
    }

    struct NotHTTP: Error {}

    /// Sends the request; cancelling the calling task cancels it.
    static func perform(_ request: URLRequest, body: Data, session: URLSession) async throws -> (Data, HTTPURLResponse) {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) in
                let task = session.uploadTask(with: request, from: body) { data, response, error in
                    if let error { continuation.resume(throwing: error); return }
                    guard let http = response as? HTTPURLResponse else { continuation.resume(throwing: NotHTTP()); return }
                    continuation.resume(returning: (data ?? Data(), http))
                }
                box.set(task)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }

    private final class TaskBox: @unchecked Sendable {
        private let lock = NSLock()
        private var task: URLSessionTask?
        private var cancelled = false
        func set(_ task: URLSessionTask) {
            let cancelNow: Bool = lock.withLock { self.task = task; return cancelled }
            if cancelNow { task.cancel() }
        }
        func cancel() {
            let task: URLSessionTask? = lock.withLock { cancelled = true; return self.task }
            task?.cancel()
        }
    }
}
