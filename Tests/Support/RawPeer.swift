import Foundation

/// A hostile HTTP peer on a raw socket (a Python child): it reads each request (headers and a
/// `Content-Length` body), then sends `answer` one byte every `interval` and holds the connection
/// open. What Hummingbird cannot do: drip the status line and headers themselves.
public final class RawPeer: @unchecked Sendable {
    private let child: ChildProcess
    /// The port on 127.0.0.1.
    public let port: Int

    static let script = """
        import socket, sys, threading, time
        answer = bytes.fromhex(sys.argv[1])
        interval = float(sys.argv[2])
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        print(server.getsockname()[1], flush=True)
        def serve(conn):
            try:
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\\r\\n\\r\\n")
                length = 0
                for line in head.split(b"\\r\\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                while len(body) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                for i in range(len(answer)):
                    conn.sendall(answer[i:i + 1])
                    time.sleep(interval)
                time.sleep(3600)
            except OSError:
                pass
        while True:
            conn, _ = server.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """

    /// Starts a peer that drips `answer`.
    public init(dripping answer: String, every interval: Double) async throws {
        let hex = answer.utf8.map { String(format: "%02x", $0) }.joined()
        child = try ChildProcess("/usr/bin/python3", ["-c", Self.script, hex, String(interval)])
        let line = try await child.waitForLine("the raw peer's port", seconds: 30) { Int($0) != nil }
        port = Int(line)!
    }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Stops the peer.
    public func stop() { child.stop() }

    deinit { child.stop() }
}
