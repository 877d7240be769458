import APITraceCapture
import APITraceFormat
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
        return BackendRequest(method: "POST", url: endpoint, headers: headers, body: body, timeout: timeout.inSeconds)
    }

    /// Lowercase hex SHA-256 of `body`, as the collector names stored files.
    static func sha256Hex(_ body: Data) -> String {
        SHA256.hash(data: body).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
