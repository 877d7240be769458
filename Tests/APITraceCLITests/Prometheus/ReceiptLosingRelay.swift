import APITraceTestSupport
import Foundation

/// A real HTTP relay (Python's `http.server`, a child process on 127.0.0.1) between devices and the
/// collector: it forwards each upload with its headers and hands back the collector's answer,
/// except that after `GET /lose/<n>` it drops the receipts of the next `n` uploads the collector
/// stored and answers `502` instead, as a connection lost after the collector stored the file would.
struct ReceiptLosingRelay: Sendable {
    let process: ChildProcess
    let port: Int

    static let script = #"""
        import http.server, socketserver, sys, threading, urllib.request, urllib.error
        listen, target = int(sys.argv[1]), sys.argv[2]
        state = {"lose": 0, "lost": 0}
        lock = threading.Lock()

        class Relay(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def reply(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers: self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_GET(self):
                if self.path.startswith("/lose/"):
                    with lock: state["lose"] += int(self.path.split("/")[2])
                    return self.reply(200, b"ok\n")
                if self.path == "/lost":
                    with lock: lost = state["lost"]
                    return self.reply(200, str(lost).encode())
                self.reply(200, b"relay\n")
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = urllib.request.Request(target + self.path, data=body, method="POST")
                for name in ("Authorization", "X-APITrace-Producer", "Content-Digest", "Content-Type"):
                    if self.headers.get(name) is not None: request.add_header(name, self.headers[name])
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        status, text, headers = answer.status, answer.read(), answer.headers
                except urllib.error.HTTPError as error:
                    status, text, headers = error.code, error.read(), error.headers
                except Exception as error:
                    return self.reply(502, ("collector unreachable: %s\n" % error).encode())
                with lock:
                    losing = state["lose"] > 0 and status in (200, 201)
                    if losing:
                        state["lose"] -= 1
                        state["lost"] += 1
                if losing: return self.reply(502, b"receipt lost in transit\n")
                retry = headers.get("Retry-After")
                self.reply(status, text, [("Retry-After", retry)] if retry else [])

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        Server(("127.0.0.1", listen), Relay).serve_forever()
        """#

    static func start(python: String, collectorPort: Int) async throws -> ReceiptLosingRelay {
        let port = try freePort()
        let process = try ChildProcess(python, ["-c", script, String(port), "http://127.0.0.1:\(collectorPort)"])
        try await process.waitUntilReady(URL(string: "http://127.0.0.1:\(port)/health")!)
        return ReceiptLosingRelay(process: process, port: port)
    }

    var uploadURL: URL { URL(string: "http://127.0.0.1:\(port)/v1/traces")! }

    /// Drops the receipts of the next `count` stored uploads.
    func loseReceipts(_ count: Int) async throws {
        _ = try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/lose/\(count)")
    }

    /// Receipts dropped so far.
    func lostReceipts() async throws -> Int {
        Int(try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/lost").text) ?? -1
    }

    func stop() { process.stop() }
}
