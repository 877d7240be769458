import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The streamed HAR export (``HARStream``) against the encoder it replaced: Foundation's
/// `JSONSerialization` over dictionaries built as `HARExporter` built them before (kept here as the
/// reference), on generated traffic and on hostile values.
@Suite("HAR stream")
struct HARStreamTests {
    static let t = TraceTimestamp(millisecondsSince1970: 1_795_341_600_500)

    /// The previous encoder, verbatim in what it wrote: one dictionary per request, sorted by start text.
    static func reference(_ events: [TraceEvent], session: String? = nil) -> Data {
        var entries: [[String: Any]] = []
        for event in events {
            guard case .request(let request) = event.payload else { continue }
            if let session, event.session != session { continue }
            let started = event.timestamp.adding(milliseconds: -Int64(request.durationMs.rounded()))
            let failed = request.status == nil
            func version(_ alpn: String?) -> String {
                switch alpn { case "h2": "HTTP/2"; case "h3": "HTTP/3"; case "http/1.0": "HTTP/1.0"; default: "HTTP/1.1" }
            }
            let phrases: [Int: String] = [
                200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 301: "Moved Permanently", 302: "Found",
                304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                409: "Conflict", 422: "Unprocessable Content", 429: "Too Many Requests", 500: "Internal Server Error",
                502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
            ]
            let timings: [String: Double]
            if let t = request.timing {
                let total = request.durationMs
                let dns = t.dnsMs ?? -1, connect = t.connectMs ?? -1
                let receive = t.firstByteMs.map { max(0, total - $0) } ?? 0
                let wait = max(0, total - max(dns, 0) - max(connect, 0) - receive)
                timings = ["blocked": -1, "dns": dns, "connect": connect, "ssl": t.tlsMs ?? -1, "send": 0, "wait": wait, "receive": receive]
            } else {
                timings = ["send": 0, "wait": request.durationMs, "receive": 0]
            }
            let path = request.route.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? request.route
            var entry: [String: Any] = [
                "startedDateTime": started.rfc3339,
                "time": request.durationMs,
                "request": [
                    "method": request.method,
                    "url": "https://\(request.host ?? "unknown.invalid")\(path.hasPrefix("/") ? path : "/" + path)",
                    "httpVersion": version(request.timing?.networkProtocol),
                    "cookies": [Any](), "headers": [Any](), "queryString": [Any](),
                    "headersSize": -1, "bodySize": request.bytesOut.map(Int.init) ?? -1,
                ] as [String: Any],
                "response": [
                    "status": request.status ?? 0,
                    "statusText": failed ? (request.error ?? "transport error") : phrases[request.status!] ?? "",
                    "httpVersion": version(request.timing?.networkProtocol),
                    "cookies": [Any](), "headers": [Any](),
                    "content": ["size": request.bytesIn.map(Int.init) ?? 0, "mimeType": ""] as [String: Any],
                    "redirectURL": "", "headersSize": -1, "bodySize": request.bytesIn.map(Int.init) ?? -1,
                ] as [String: Any],
                "cache": [String: Any](),
                "timings": timings,
                "_route": request.route,
                "_attempt": request.attempt,
            ]
            if let error = request.error { entry["_error"] = error }
            if let reused = request.timing?.reusedConnection { entry["_reusedConnection"] = reused }
            if let traceID = event.traceID { entry["_traceId"] = traceID }
            if let session = event.session { entry["_session"] = session }
            entries.append(entry)
        }
        let sorted = entries.sorted { ($0["startedDateTime"] as! String) < ($1["startedDateTime"] as! String) }
        let log: [String: Any] = ["log": ["version": "1.2", "creator": ["name": "apitrace", "version": "0.1.0"], "entries": sorted] as [String: Any]]
        return (try? JSONSerialization.data(withJSONObject: log, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    /// The lines of `events`, as the writer encodes them.
    static func lines(_ events: [TraceEvent]) -> [String] {
        events.map { event in
            var out = JSONOutput()
            event.encode(to: &out)
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    /// The events the reading layer makes of `lines` (what an export of them holds).
    static func decoded(_ lines: [String]) throws -> [TraceEvent] {
        try lines.map { line in
            guard case .event(let event) = try TraceLine.decode(line) else { throw BadLine(line: line) }
            return event
        }
    }

    struct BadLine: Error { var line: String }

    /// Trace files of these lines on disk, streamed through a ``HARStream`` holding at most `memoryLimit` bytes.
    static func streamed(_ files: [[String]], memoryLimit: Int, session: String? = nil, in dir: TemporaryDirectory) throws -> Data {
        var paths: [String] = []
        for (i, lines) in files.enumerated() {
            var out = JSONOutput()
            TraceFileHeader(producer: "p\(i)", started: t).encode(to: &out)
            out.bytes.append(0x0A)
            for line in lines { out.bytes += Array(line.utf8); out.bytes.append(0x0A) }
            let path = dir.file(TraceFileIdentity(started: t.adding(milliseconds: Int64(i) * 60_000), producer: "0000000\(i)", sequence: 1).fileName)
            try Data(try GzipDeflater.compress(out.bytes)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        var har = HARStream(session: session.map(TextPattern.init), memoryLimit: memoryLimit, temporaryDirectory: dir.path)
        let read = try TraceExportReader().read(paths, into: &har)
        #expect(read.usableFiles == files.count && read.warnings.isEmpty, "\(read.warnings)")
        var bytes = Data()
        try har.write { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Requests with every optional field, hostile text and numbers of many decimals.
    static var awkward: [TraceEvent] {
        let texts = ["/apps/{id}/ü ñ?x=1#f;a:b", "quote\" back\\slash /slash:a", "emoji 😀 line\u{2028}sep", "tab\tnl\ncr\r del\u{7F}", "\u{1}\u{1F}", "a:b/c:d[]|"]
        var events: [TraceEvent] = []
        for (i, text) in texts.enumerated() {
            events.append(TraceEvent(timestamp: t.adding(milliseconds: Int64(i)), session: text, traceID: "t\(i)", .request(.init(
                method: "POST", route: text, host: i == 0 ? nil : "h\(i).example", status: i == 1 ? nil : [200, 404, 503, 201, 299, 302][i],
                durationMs: [0.5, 1.5, 1234.567, 0.001, 8_640_000_000, 2.5][i], bytesIn: i == 2 ? nil : Int64(i * 1000), bytesOut: Int64(i),
                error: i == 1 ? text : nil, attempt: i + 1,
                timing: i == 3 ? nil : .init(dnsMs: i == 2 ? nil : 1.25, connectMs: 3.3, tlsMs: 2.2, firstByteMs: [0.3, 1.1, 1000.001, 0, 7, 0.25][i],
                                             networkProtocol: ["h2", "h3", "http/1.0", "spdy", "http/1.1", "h2c"][i], reusedConnection: i % 2 == 0)))))
        }
        return events
    }

    @Test("streamed through sorted temporary runs (a 64 KiB bound, so lines spill and runs merge), the archive is byte for byte the previous encoder's")
    func sameBytesAsBefore() throws {
        let dir = TemporaryDirectory()
        let traces = try GeneratedTraces(events: 6000, files: 3, seed: 5)
        // Three files' event lines, and a long request of the last file that started before everything else.
        var files: [[String]] = traces.paths.map { path in
            var lines: [String] = []
            TraceFileReader(path: path).forEachRawLine { line, number in
                if number > 1 { lines.append(String(decoding: line, as: UTF8.self)) }
                return true
            }
            return lines
        }
        let end = try Self.decoded([files[2][0]])[0].timestamp
        files[2] += Self.lines([TraceEvent(timestamp: end, session: "late", .request(.init(method: "GET", route: "/long", status: 200, durationMs: 86_400_000)))])
        let all = try Self.decoded(files.flatMap { $0 })
        let expected = Self.reference(all)
        let streamed = try Self.streamed(files, memoryLimit: 64 << 10, in: dir)
        #expect(streamed == expected)
        var inMemory = HARExporter()
        all.forEach { inMemory.add($0) }
        #expect(inMemory.archive() == expected)
        let log = try #require((try JSONSerialization.jsonObject(with: streamed) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == all.filter { if case .request = $0.payload { true } else { false } }.count)
        #expect(entries.first?["_route"] as? String == "/long")
    }

    @Test("hostile text, missing fields and timings: the same JSON as before (byte for byte but for \\b and \\f, written as \\u0008 and \\u000c)")
    func awkwardValues() throws {
        let lines = Self.lines(Self.awkward)
        #expect(try Self.streamed([lines], memoryLimit: 1 << 20, in: TemporaryDirectory()) == Self.reference(try Self.decoded(lines)))
        let controls = Self.lines([TraceEvent(timestamp: Self.t, .request(.init(method: "GET", route: "/b\u{8}f\u{C}", status: 200, durationMs: 1)))])
        let parsed = try JSONSerialization.jsonObject(with: try Self.streamed([controls], memoryLimit: 1 << 20, in: TemporaryDirectory())) as? NSDictionary
        let reference = try JSONSerialization.jsonObject(with: Self.reference(try Self.decoded(controls))) as? NSDictionary
        #expect(parsed != nil && parsed == reference)
    }

    @Test("a session filter keeps that session's requests; none kept gives an empty entries array")
    func sessionAndEmpty() throws {
        let lines = Self.lines(Self.awkward)
        let events = try Self.decoded(lines)
        for session in [events[2].session, "nobody"] {
            #expect(try Self.streamed([lines], memoryLimit: 1 << 20, session: session, in: TemporaryDirectory()) == Self.reference(events, session: session))
        }
    }

    @Test("numbers are written as Foundation writes them, for any value a line can hold (lines written by hand with every digit)")
    func numbers() throws {
        var values: [Double] = [0, 0.001, 0.1, 0.5, 1e-7, 123.4567891, 999_999_999.999, 1e9, 1e9 + 0.5, 8_640_000_000, 2.5e-5, .leastNonzeroMagnitude]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let magnitude = Double.random(in: -4...9.9, using: &generator)
            values.append((pow(10, magnitude) * 1000).rounded() / 1000)
            values.append(pow(10, magnitude))
        }
        let lines = values.enumerated().map { i, v in
            #"{"type":"request","ts":"2026-11-22T10:00:\#(String(format: "%02d", i % 60)).000Z","method":"GET","route":"/n","status":200,"duration_ms":\#(v),"connect_ms":\#(v / 3),"ttfb_ms":\#(v / 7)}"#
        }
        #expect(try Self.streamed([lines], memoryLimit: 1 << 20, in: TemporaryDirectory()) == Self.reference(try Self.decoded(lines)))
    }
}
