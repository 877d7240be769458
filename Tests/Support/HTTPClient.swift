public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plain HTTP client for the tests, over URLSession.
public enum HTTPClient {
    public struct Answer: Sendable {
        public var status: Int
        public var text: String
        public var headers: [String: String]
    }

    public static func request(_ method: String, _ url: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 120  // 200 concurrent uploads on a loaded 2-core machine can queue past 30 s
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        return try await withCheckedThrowingContinuation { continuation in
            let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
                if let error { continuation.resume(throwing: error); return }
                let http = response as! HTTPURLResponse
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields { headers[String(describing: key).lowercased()] = String(describing: value) }
                continuation.resume(returning: Answer(status: http.statusCode, text: String(decoding: data ?? Data(), as: UTF8.self), headers: headers))
            }
            let task = body.map { session.uploadTask(with: request, from: $0, completionHandler: completion) }
                ?? session.dataTask(with: request, completionHandler: completion)
            task.resume()
        }
    }

    public static func upload(_ url: String, _ body: [UInt8], token: String? = "secret-token") async throws -> Answer {
        var headers = ["Content-Type": "application/gzip"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try await request("POST", url, body: Data(body), headers: headers)
    }
}
