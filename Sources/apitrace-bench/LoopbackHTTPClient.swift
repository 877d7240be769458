import Foundation

/// A minimal blocking HTTP/1.1 client over one keep-alive TCP connection to 127.0.0.1, so the
/// benchmark measures the collector rather than URLSession.
final class LoopbackHTTPClient {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var pending: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw BenchError("connect: \(reason)")
        }
    }

    deinit { close(fd) }

    /// POSTs `body` and returns the status code.
    func post(path: String, token: String, body: [UInt8]) throws -> Int {
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/gzip\r\nContent-Length: \(body.count)\r\n\r\n"
        try send(Array(head.utf8))
        try send(body)
        return try readResponse().status
    }

    /// GETs `path` and returns the body as text (the collector's `/metrics`).
    func get(path: String) throws -> String {
        try send(Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        return String(decoding: try readResponse().body, as: UTF8.self)
    }

    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 { if errno == EINTR { continue }; throw BenchError("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    private func fill() throws {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n <= 0 { throw BenchError("connection closed by the collector") }
        pending += buffer[0..<n]
    }

    private func readResponse() throws -> (status: Int, body: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            try fill()
            end = pending.indices.dropLast(3).first { pending[$0..<($0 + 4)].elementsEqual(separator) }
        }
        let headerText = String(decoding: pending[..<end!], as: UTF8.self)
        let lines = headerText.split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "content-length" ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
        }.first ?? 0
        let total = end! + 4 + length
        while pending.count < total { try fill() }
        let body = Array(pending[(end! + 4)..<total])
        pending.removeFirst(total)
        return (status, body)
    }
}
