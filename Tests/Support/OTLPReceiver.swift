import Foundation

/// A real OTLP/HTTP receiver in Python on 127.0.0.1 (port 0, printed on start) that decodes what
/// arrives with the official OpenTelemetry classes (`opentelemetry-proto` from PyPI:
/// `opentelemetry.proto.collector.{trace,logs,metrics}.v1.*_service_pb2`) and writes each request,
/// decoded, as one JSON line (`MessageToDict`, ids as hex) to `received.jsonl` in its folder.
///
/// Replies follow `replies` in order (`"503:1"` is a 503 with `Retry-After: 1`, `"400"` a 400,
/// `"hang"` reads the request and never answers, `"slow"` answers 200 after 0.3 s), then 200 with an empty `Export*ServiceResponse`.
/// `port` 0 picks a free one; a port from ``freePort()`` lets a test start the receiver late.
public final class OTLPReceiver: @unchecked Sendable {
    public let folder: String
    public let child: ChildProcess
    public let port: Int

    /// One request as the receiver decoded it.
    public struct Request: @unchecked Sendable {
        public var path: String
        public var headers: [String: String]
        public var wireBytes: Int
        public var body: [String: Any]
        /// When it arrived (seconds since 1970, the receiver's clock).
        public var time: Double
    }

    public static func start(in folder: String, replies: [String] = [], port: Int = 0) async throws -> OTLPReceiver {
        let script = folder + "/otlp_receiver.py"
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        let child = try ChildProcess("/usr/bin/env", ["python3", script, folder + "/received.jsonl", replies.joined(separator: ","), String(port)])
        let line = try await child.waitForLine("the OTLP receiver's port", seconds: 60) { $0.hasPrefix("port ") }
        return OTLPReceiver(folder: folder, child: child, port: Int(line.dropFirst(5))!)
    }

    private init(folder: String, child: ChildProcess, port: Int) {
        self.folder = folder
        self.child = child
        self.port = port
    }

    /// The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Every request decoded so far (refused ones included, with `"refused"` in the body).
    public var requests: [Request] {
        let text = (try? String(contentsOfFile: folder + "/received.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Request(
                path: object["path"] as? String ?? "", headers: object["headers"] as? [String: String] ?? [:],
                wireBytes: object["wire_bytes"] as? Int ?? 0, body: object["body"] as? [String: Any] ?? [:],
                time: object["time"] as? Double ?? 0)
        }
    }

    /// Asks it to end (SIGTERM) without waiting: for `defer` in async tests.
    public func stop() { child.stop() }

    static let script = #"""
import base64, gzip, json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as ts
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as ls
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as ms

out_path = sys.argv[1]
replies = [r for r in (sys.argv[2].split(",") if len(sys.argv) > 2 else []) if r]
listen_port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
lock = threading.Lock()
KINDS = {"/v1/traces": (ts.ExportTraceServiceRequest, ts.ExportTraceServiceResponse),
         "/v1/logs": (ls.ExportLogsServiceRequest, ls.ExportLogsServiceResponse),
         "/v1/metrics": (ms.ExportMetricsServiceRequest, ms.ExportMetricsServiceResponse)}
ID_KEYS = {"traceId", "spanId", "parentSpanId"}

def ids_to_hex(node):
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ID_KEYS and isinstance(v, str) else ids_to_hex(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [ids_to_hex(v) for v in node]
    return node

def ids_to_base64(node):
    # OTLP JSON writes ids as hex; protobuf's JSON parser wants base64 (as the Collector converts).
    if isinstance(node, dict):
        return {k: (base64.b64encode(bytes.fromhex(v)).decode() if k in ID_KEYS and isinstance(v, str) else ids_to_base64(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [ids_to_base64(v) for v in node]
    return node

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        record = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "wire_bytes": len(raw), "time": time.time()}
        with lock:
            reply = replies.pop(0) if replies else "200"
        if reply == "hang":
            time.sleep(3600)
            return
        if reply == "slow":
            time.sleep(0.3)
            reply = "200"
        status, _, retry = reply.partition(":")
        status = int(status)
        try:
            data = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
            request_type, response_type = KINDS[self.path]
            message = request_type()
            if self.headers.get("Content-Type") == "application/json":
                json_format.ParseDict(ids_to_base64(json.loads(data)), message)
            else:
                message.ParseFromString(data)
            record["body"] = ids_to_hex(json_format.MessageToDict(message))
            if status != 200:
                record["body"]["refused"] = status
            answer = response_type().SerializeToString()
        except Exception as error:
            record["body"] = {"decode_error": repr(error)}
            status, answer = 400, b"cannot decode: " + repr(error).encode()
        with lock:
            with open(out_path, "a") as f:
                f.write(json.dumps(record) + "\n")
        self.send_response(status)
        if retry:
            self.send_header("Retry-After", retry)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", listen_port), Handler)
print("port", server.server_address[1], flush=True)
server.serve_forever()
"""#
}
