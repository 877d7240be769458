public import Foundation

/// A real WebSocket server written by others (the `websockets` package from PyPI), started on
/// 127.0.0.1 on a port of the system's choosing, with one path per behaviour under test:
///
/// | path | behaviour |
/// | --- | --- |
/// | `/numbers?per=N&ends=a,b,c` | numbers its messages across connections (1, 2, 3, ...): sends `per` on each connection, then ends it the next way in `ends` (`1000`, `1001`, `1011`, `1008`, `4001`: a close frame with that code; `drop`: the TCP connection aborted without a close frame); the last way repeats |
/// | `/echo` | sends back every message; answers pings |
/// | `/silent` | opens, then reads nothing more: pings go unanswered |
/// | `/slow-pong?ms=N` | answers each ping only after N ms |
/// | `/refuse?status=N` | refuses the handshake with HTTP status N |
/// | `/redirect?to=URL` | answers the handshake with 302 to URL |
/// | `/endless-frame` | starts a binary frame that claims 2^40 bytes and streams zeros |
/// | `/endless-message` | starts a text message and sends one-byte continuation frames forever |
/// | `/flood?n=N&size=S` | writes N text frames of S bytes (default 1) without waiting for the socket, then closes 1000 |
/// | `/headers` | sends the handshake's `Authorization` header back as one message, then closes 1000 |
///
/// Every handshake's path and `Authorization` header are printed as JSON lines on standard output
/// (`{"path": ..., "authorization": ...}`), after the first line, which is the port.
public final class WebSocketTestServer: Sendable {
    public let process: ChildProcess
    public let port: Int

    static let script = #"""
import asyncio, json, struct, sys, urllib.parse
from websockets.asyncio.server import serve
from websockets.http11 import Response
from websockets.datastructures import Headers

counters = {}

def log(**fields):
    print(json.dumps(fields), flush=True)

async def process_request(connection, request):
    url = urllib.parse.urlsplit(request.path)
    query = dict(urllib.parse.parse_qsl(url.query))
    log(path=url.path, authorization=request.headers.get("Authorization"))
    if url.path == "/refuse":
        status = int(query.get("status", "403"))
        return Response(status, "Refused", Headers([("Content-Length", "7")]), b"refused")
    if url.path == "/redirect":
        return Response(302, "Found", Headers([("Location", query["to"]), ("Content-Length", "0")]), b"")
    return None

def raw_frame(opcode, payload, fin=True):
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload

async def handler(ws):
    url = urllib.parse.urlsplit(ws.request.path)
    query = dict(urllib.parse.parse_qsl(url.query))
    path = url.path
    if path == "/numbers":
        per = int(query.get("per", "3"))
        ends = query.get("ends", "1000").split(",")
        key = url.query
        state = counters.setdefault(key, {"n": 0, "connection": 0})
        end = ends[min(state["connection"], len(ends) - 1)]
        state["connection"] += 1
        for _ in range(per):
            state["n"] += 1
            await ws.send(str(state["n"]))
        await asyncio.sleep(0.05)
        if end == "drop":
            ws.transport.abort()
        else:
            await ws.close(int(end), "bye " + end)
    elif path == "/echo":
        async for message in ws:
            await ws.send(message)
    elif path == "/silent":
        ws.transport.pause_reading()
        await asyncio.sleep(3600)
    elif path == "/slow-pong":
        delay = int(query.get("ms", "300")) / 1000
        ws.transport.pause_reading()
        await asyncio.sleep(delay)
        ws.transport.resume_reading()
        async for message in ws:
            pass
    elif path == "/endless-frame":
        await asyncio.sleep(float(query.get("wait", "0")))
        ws.transport.write(bytes([0x82, 127]) + struct.pack("!Q", 1 << 40))
        chunk = bytes(65536)
        try:
            while not ws.transport.is_closing():
                ws.transport.write(chunk)
                await asyncio.sleep(0.001)
        except Exception:
            pass
    elif path == "/endless-message":
        ws.transport.write(raw_frame(0x1, b"a", fin=False))
        one = raw_frame(0x0, b"b", fin=False)
        try:
            while not ws.transport.is_closing():
                ws.transport.write(one * 4096)
                await asyncio.sleep(0.001)
        except Exception:
            pass
    elif path == "/flood":
        n = int(query.get("n", "100000"))
        frame = raw_frame(0x1, b"x" * int(query.get("size", "1")))
        batch = 1000
        sent = 0
        while sent < n and not ws.transport.is_closing():
            k = min(batch, n - sent)
            ws.transport.write(frame * k)
            sent += k
            await asyncio.sleep(0)
        ws.transport.write(raw_frame(0x8, struct.pack("!H", 1000)))
        await asyncio.sleep(30)
    elif path == "/headers":
        await ws.send(ws.request.headers.get("Authorization") or "")
        await ws.close(1000)

async def main():
    async with serve(handler, "127.0.0.1", 0, process_request=process_request, ping_interval=None, max_size=None) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()

asyncio.run(main())
"""#

    public init() async throws {
        process = try ChildProcess("/usr/bin/env", ["python3", "-u", "-c", Self.script])
        let first = try await process.waitForLine("the websockets server's port", seconds: 60) { Int($0) != nil }
        port = Int(first)!
    }

    public func url(_ pathAndQuery: String) -> URL {
        URL(string: "ws://127.0.0.1:\(port)\(pathAndQuery)")!
    }

    /// The handshakes the server saw: path and Authorization header.
    public var handshakes: [(path: String, authorization: String?)] {
        process.lines.dropFirst().compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let path = object["path"] as? String else { return nil }
            return (path, object["authorization"] as? String)
        }
    }

    public func stop() { process.stop() }
}
