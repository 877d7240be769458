import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Testing

/// The collector served by Hummingbird on 127.0.0.1, fed good and bad uploads over real HTTP.
@Suite("Collector")
struct TraceCollectorTests {
    static let token = "secret-token"

    static func start(_ dir: TemporaryDirectory, maxBody: Int = 1 << 20, maxDecompressed: Int = 4 << 20) async throws -> RunningCollector {
        let collector = try TraceCollector(configuration: .init(
            directory: dir.path, tokens: ["other-token", token], maxBodyBytes: maxBody, maxDecompressedBytes: maxDecompressed))
        return try await RunningCollector.start(collector)
    }

    @Test("a valid file is stored under dt=<day of its header>/ in its producer's open file, byte for byte; sending it again is 200 already stored")
    func storesAndIsIdempotent() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let started = TraceTimestamp(rfc3339: "2026-11-21T23:59:58.500Z")!
        let bytes = TraceFiles.make(producer: "../../etc/passwd", started: started, events: TraceFiles.requests(50, seed: 1))

        let first = try await HTTPClient.upload(server.uploadURL, bytes)
        #expect(first.status == 201)
        let expected = "dt=2026-11-21/20261121T235958Z-______etc_passwd-open.jsonl.gz"
        let segment = "dt=2026-11-21/20261121T235958Z-______etc_passwd-\(TraceFiles.sha256Hex(bytes).prefix(16)).jsonl.gz"
        #expect(first.text == "stored \(segment) (in \(expected))\n")
        #expect(TraceFiles.allFiles(under: dir.path) == [expected])
        #expect(FileManager.default.contents(atPath: dir.file(expected)).map([UInt8].init) == bytes)

        let again = try await HTTPClient.upload(server.uploadURL, bytes)
        #expect(again.status == 200)
        #expect(again.text == "already stored \(segment) (in \(expected))\n")
        #expect(TraceFiles.allFiles(under: dir.path) == [expected])
        let snapshot = server.collector.metrics.snapshot
        #expect(snapshot.accepted == 1 && snapshot.duplicates == 1 && snapshot.storedBytes == bytes.count)
        #expect(snapshot.receivedBytes == 2 * bytes.count)
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var body: [UInt8]
        var token: String?
        var status: Int
        var reason: UploadRejection.Reason
        var says: String
        var testDescription: String { name }
    }

    static let valid = TraceFiles.make(producer: "p1", events: TraceFiles.requests(200, seed: 3))

    static let badInputs: [BadInput] = [
        BadInput(name: "no token", body: valid, token: nil, status: 401, reason: .missingToken, says: "missing token"),
        BadInput(name: "wrong token", body: valid, token: "secret-tokem", status: 401, reason: .invalidToken, says: "invalid token"),
        BadInput(name: "non-gzip body", body: Array("{\"type\":\"header\"}\n".utf8), token: token, status: 400, reason: .notGzip, says: "not gzip"),
        BadInput(name: "empty body", body: [], token: token, status: 400, reason: .emptyBody, says: "empty"),
        BadInput(name: "gzip cut before the end of its header line", body: Array(valid.prefix(12)), token: token, status: 400,
                 reason: .truncated, says: "before the end of the header line"),
        BadInput(name: "corrupt gzip", body: Array(valid.prefix(40)) + [UInt8](repeating: 0x55, count: 40) + Array(valid.dropFirst(80)),
                 token: token, status: 400, reason: .notGzip, says: "corrupt"),
        BadInput(name: "gzip bomb (decompresses past the limit)", body: gzipBomb, token: token, status: 413, reason: .decompressedTooLarge,
                 says: "decompresses to more than 4194304 bytes"),
        BadInput(name: "oversized body", body: [0x1F, 0x8B] + [UInt8](repeating: 7, count: (1 << 20) + 10), token: token, status: 413,
                 reason: .bodyTooLarge, says: "more than the collector's limit"),
        BadInput(name: "header claiming a newer version", body: TraceFiles.make(producer: "future", version: 2), token: token,
                 status: 400, reason: .newerVersion, says: "version 2, newer than this collector reads (1)"),
        BadInput(name: "header of version 0 (readers skip it too: HeaderCheck)", body: TraceFiles.make(producer: "zero", version: 0), token: token,
                 status: 400, reason: .invalidHeader, says: "header field \"version\" is 0; versions start at 1"),
        BadInput(name: "gzip of something that is not a trace", body: try! GzipDeflater.compress(Array("hello\nworld\n".utf8)),
                 token: token, status: 400, reason: .invalidHeader, says: "not a valid apitrace header"),
        BadInput(name: "first line is an event, not a header",
                 body: try! GzipDeflater.compress(Array(#"{"type":"log","ts":"2026-11-22T10:00:00.000Z","level":"info","message":"x"}"#.utf8) + [0x0A]),
                 token: token, status: 400, reason: .invalidHeader, says: "not an apitrace header"),
    ]

    /// A valid header followed by 16 MiB of spaces: about 16 KiB compressed.
    static var gzipBomb: [UInt8] {
        var plain = Array(#"{"type":"header","format":"apitrace","version":1,"producer":"bomb","started":"2026-11-22T10:00:00.000Z"}"#.utf8) + [0x0A]
        plain += [UInt8](repeating: 0x20, count: 16 << 20)
        return try! GzipDeflater.compress(plain, level: 9)
    }

    @Test("bad input gets the right status and a reason, is counted by reason, and nothing is stored", arguments: badInputs)
    func rejects(_ input: BadInput) async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let answer = try await HTTPClient.upload(server.uploadURL, input.body, token: input.token)
        #expect(answer.status == input.status)
        #expect(answer.text.contains(input.says), "\(answer.text)")
        if input.status == 401 { #expect(answer.headers["www-authenticate"] == "Bearer") }
        #expect(!answer.text.contains(Self.token))
        #expect(server.collector.metrics.snapshot.rejected == [input.reason: 1])
        #expect(TraceFiles.allFiles(under: dir.path).isEmpty)
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.text.contains("apitrace_collector_files_rejected_total{reason=\"\(input.reason.rawValue)\"} 1\n"))
    }

    @Test("a chunked body (no Content-Length) over the limit is cut off with 413 as it streams in")
    func chunkedOversized() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let body = dir.file("big.bin")
        _ = FileManager.default.createFile(atPath: body, contents: Data([0x1F, 0x8B] + [UInt8](repeating: 1, count: 3 << 20)))
        let result = try await runOffPool("/usr/bin/curl", [
            "-s", "--max-time", "60", "-o", "-", "-w", "%{http_code}", "-H", "Authorization: Bearer \(Self.token)", "-H", "Transfer-Encoding: chunked",
            "--data-binary", "@" + body, server.uploadURL])
        let output = String(decoding: result.stdout, as: UTF8.self)
        #expect(output.hasSuffix("413"), "\(output)")
        #expect(output.contains("more than the collector's limit"))
        #expect(server.collector.metrics.snapshot.rejected == [.bodyTooLarge: 1])
        #expect(TraceFiles.allFiles(under: dir.path) == ["big.bin"])
    }

    @Test("a body whose Content-Digest does not match is refused with 400")
    func digestMismatch() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let other = Data(TraceFiles.make(producer: "other")).base64EncodedString()
        let wrong = try await HTTPClient.request("POST", server.uploadURL, body: Data(Self.valid), headers: [
            "Authorization": "Bearer \(Self.token)", "Content-Digest": "sha-256=:\(other):"])
        #expect(wrong.status == 400 && wrong.text.contains("Content-Digest"))
        let right = try await HTTPClient.request("POST", server.uploadURL, body: Data(Self.valid), headers: [
            "Authorization": "Bearer \(Self.token)",
            "Content-Digest": "sha-256=:\(Data(hex: TraceFiles.sha256Hex(Self.valid)).base64EncodedString()):"])
        #expect(right.status == 201)
    }

    @Test("concurrent uploads of the same file store it once: one 201, the rest 200, no temporary file left")
    func concurrentSameFile() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let bytes = TraceFiles.make(producer: "same", events: TraceFiles.requests(2000, seed: 9))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<12 { group.addTask { try await HTTPClient.upload(server.uploadURL, bytes).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.sorted() == [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201])
        let files = TraceFiles.allFiles(under: dir.path)
        #expect(files.count == 1)
        #expect(files.allSatisfy { !$0.split(separator: "/").last!.hasPrefix(".") })
        #expect(TraceFiles.stored(under: dir.path)[TraceFiles.sha256Hex(bytes)]?.count == 1)
    }

    @Test("while uploads are being stored, every visible file is already whole (checked by a concurrent reader)")
    func neverHalfWritten() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir, maxBody: 8 << 20, maxDecompressed: 64 << 20)
        defer { Task { await server.stop() } }
        let bodies = (0..<16).map { TraceFiles.make(producer: "w\($0 % 4)", started: TraceFiles.day.adding(milliseconds: Int64($0) * 60_000), events: TraceFiles.requests(4000, seed: $0)) }
        let checked = Recorded<String>()
        // Four producers' segments, appended to four open files while the reader reads them.
        let watcher = Task.detached {
            while !Task.isCancelled {
                for relative in TraceFiles.allFiles(under: dir.path) where !relative.split(separator: "/").last!.hasPrefix(".") {
                    let read = TraceFileReader(path: dir.file(relative)).forEachEvent { _ in }
                    checked.append(read.header != nil && read.warnings.isEmpty && read.events % 4000 == 0 ? "whole" : "PARTIAL \(relative) \(read.events) \(read.warnings)")
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        // Each producer sends its segments in order, as its uploader does; the four producers at once.
        // (A segment that arrives after a later one of its producer is stored alone, by design.)
        let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
            for producer in 0..<4 {
                group.addTask {
                    var statuses: [Int] = []
                    for body in stride(from: producer, to: bodies.count, by: 4).map({ bodies[$0] }) {
                        statuses.append(try await HTTPClient.upload(server.uploadURL, body).status)
                    }
                    return statuses
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        watcher.cancel()
        _ = await watcher.value
        #expect(statuses == Array(repeating: 201, count: 16))
        #expect(!checked.all.isEmpty)
        #expect(checked.all.allSatisfy { $0 == "whole" }, "\(checked.all.filter { $0 != "whole" })")
        #expect(TraceFiles.allFiles(under: dir.path).count == 4)
    }

    @Test("GET /health answers ok; GET /metrics is OpenMetrics text with every counter")
    func healthAndMetrics() async throws {
        let dir = TemporaryDirectory()
        let server = try await Self.start(dir)
        defer { Task { await server.stop() } }
        let health = try await HTTPClient.request("GET", server.baseURL + "/health")
        #expect(health.status == 200 && health.text == "ok\n")
        _ = try await HTTPClient.upload(server.uploadURL, Self.valid)
        _ = try await HTTPClient.upload(server.uploadURL, Self.valid, token: "nope")
        let metrics = try await HTTPClient.request("GET", server.baseURL + "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("application/openmetrics-text") == true)
        let lines = Set(metrics.text.split(separator: "\n").map(String.init))
        #expect(lines.contains("apitrace_collector_files_accepted_total 1"))
        #expect(lines.contains("apitrace_collector_files_duplicate_total 0"))
        #expect(lines.contains("apitrace_collector_files_rejected_total{reason=\"invalid_token\"} 1"))
        #expect(lines.contains("apitrace_collector_files_rejected_total{reason=\"disk_full\"} 0"))
        #expect(lines.contains("apitrace_collector_stored_bytes_total \(Self.valid.count)"))
        #expect(lines.contains("apitrace_collector_received_bytes_total \(Self.valid.count)"))
        #expect(metrics.text.hasSuffix("# EOF\n"))
    }

    @Test("a collector without a token refuses to start")
    func noToken() throws {
        let dir = TemporaryDirectory()
        #expect(throws: CollectorSetupError.self) { try TraceCollector(configuration: .init(directory: dir.path, tokens: [])) }
        #expect(throws: CollectorSetupError.self) { try TraceCollector(configuration: .init(directory: dir.path, tokens: [""])) }
    }

    @Test("temporary files a killed collector left are removed when it starts again; stored files stay")
    func sweepsTemporaryFiles() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("dt=2026-11-22"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir.file("dt=2026-11-22/.upload-1234"), contents: Data([1, 2]))
        _ = FileManager.default.createFile(atPath: dir.file("dt=2026-11-22/a.jsonl.gz"), contents: Data(Self.valid))
        _ = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        #expect(TraceFiles.allFiles(under: dir.path) == ["dt=2026-11-22/a.jsonl.gz"])
    }
}

extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}
