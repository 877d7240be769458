import APITraceCapture
import Crypto
import Foundation

/// Builds the `POST` of one trace file, sent through the capture side's `URLSessionBackend`.
enum UploadRequest {
    static func make(endpoint: URL, token: String, producer: String?, body: Data, timeout: Duration) -> BackendRequest {
        var headers = [
            "Authorization": "Bearer \(token)",
            "Content-Type": "application/gzip",
            "Content-Digest": "sha-256=:\(Data(SHA256.hash(data: body)).base64EncodedString()):",
        ]
        if let producer { headers["X-APITrace-Producer"] = producer }
        return BackendRequest(method: "POST", url: endpoint, headers: headers, body: body, timeout: RetryPolicy.seconds(timeout))
    }
}
