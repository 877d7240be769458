import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceFormat
import APITraceUpload
import Crypto
import Foundation
import Testing

/// A real writer process SIGKILLed mid-run; its file cut at every flush point goes through the real
/// collector (and the uploader), and what is stored is checked against Python's zlib on the same bytes.
@Suite("Files of killed apps")
struct KilledAppFileTests {
    static let token = "secret-token"

    /// Runs the producer fixture (a sync flush every 20 ms) until its file holds `events` events, then SIGKILLs it.
    static func killedWritersFile(_ dir: TemporaryDirectory, events: Int) async throws -> String {
        let producer = try ChildProcess(try builtProduct("trace-producer-fixture").path, [dir.path, "20"])
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            if let file = dir.traceFiles.first, TraceFileReader(path: file).forEachRawLine({ _, _ in true }).lines > events { break }
        }
        try await producer.kill(SIGKILL)
        return try #require(dir.traceFiles.first)
    }

    /// Offsets just after each `Z_SYNC_FLUSH` marker (an empty stored block, `00 00 ff ff`): where a killed writer's file can end.
    static func flushPoints(_ bytes: [UInt8]) -> [Int] {
        guard bytes.count >= 4 else { return [] }
        return (4...bytes.count).filter { bytes[$0 - 4] == 0 && bytes[$0 - 3] == 0 && bytes[$0 - 2] == 0xFF && bytes[$0 - 1] == 0xFF }
    }

    struct Expected: Decodable {
        /// Complete lines in the prefix.
        var lines: Int
        /// Bytes after the last newline.
        var partial: Int
        /// SHA-256 of the complete lines, newlines included.
        var sha256: String
    }

    /// What the first `offset` bytes of `path` hold, decoded by Python's zlib: an independent gzip reader.
    static func expected(_ path: String, offsets: [Int]) async throws -> [Expected] {
        let script = """
        import hashlib, json, sys, zlib
        data = open(sys.argv[1], 'rb').read()
        out = []
        for offset in map(int, sys.argv[2:]):
            plain = zlib.decompressobj(31).decompress(data[:offset])
            complete = plain[:plain.rfind(b'\\n') + 1]
            out.append({"lines": complete.count(b'\\n'), "partial": len(plain) - len(complete), "sha256": hashlib.sha256(complete).hexdigest()})
        print(json.dumps(out))
        """
        let result = try await runOffPool("/usr/bin/env", ["python3", "-c", script, path] + offsets.map(String.init))
        try #require(result.status == 0, "python3: \(String(decoding: result.stderr, as: UTF8.self))")
        return try JSONDecoder().decode([Expected].self, from: result.stdout)
    }

    /// The complete lines of a stored file (which must be a complete gzip file) and their SHA-256.
    /// The segment last appended to a stored file (at the offsets its producer's journal records), copied to a file of its own.
    static func lastSegment(of relative: String, in store: TemporaryDirectory) throws -> String {
        let journals = try FileManager.default.contentsOfDirectory(atPath: store.file(".producers")).filter { $0.hasSuffix(".journal") }
        let text = try String(contentsOfFile: store.file(".producers/" + journals[0]), encoding: .utf8)
        var ends = [0]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "O" { ends = [0] }
            if fields.first == "A", let end = Int(fields[2]) { ends.append(end) }
        }
        let bytes = try #require(FileManager.default.contents(atPath: store.file(relative)))
        let copy = NSTemporaryDirectory() + "apitrace-segment-\(UUID().uuidString).jsonl.gz"
        #expect(FileManager.default.createFile(atPath: copy, contents: bytes[ends[ends.count - 2]..<ends[ends.count - 1]]))
        return copy
    }

    static func readBack(_ path: String) -> (lines: Int, sha256: String, problem: TraceReadWarning?) {
        var hasher = SHA256()
        let raw = TraceFileReader(path: path).forEachRawLine { line, _ in
            hasher.update(bufferPointer: line)
            hasher.update(data: [0x0A])
            return true
        }
        return (raw.lines, hasher.finalize().map { String(format: "%02x", $0) }.joined(), raw.problem)
    }

    @Test("a SIGKILLed writer's file cut at its flush points (every one, up to 120) is accepted, stored as a complete file, and read back with every complete line")
    func everyFlushPoint() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let path = try await Self.killedWritersFile(source, events: 600)
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        // Every flush point after the header's, plus the file as the kill left it (maybe mid-write).
        let all = Array(Self.flushPoints(bytes).dropFirst())
        try #require(all.count >= 10, "only \(all.count) flush points")
        // Every flush point up to 120 of them; past that (a slow producer on a loaded machine flushes
        // more often), 120 spread evenly from first to last: each upload re-inflates its whole prefix.
        let points = all.count <= 120 ? all : (0..<120).map { all[$0 * (all.count - 1) / 119] }
        let offsets = points + (points.last == bytes.count ? [] : [bytes.count])
        let expected = try await Self.expected(path, offsets: offsets)
        try #require(expected.count == offsets.count)

        // Salvage is under test here; counting at ingest is tested on its own (IngestMetricsTests).
        let server = try await RunningCollector.start(try TraceCollector(configuration: .init(directory: target.path, tokens: [Self.token], ingestMetrics: false)))
        defer { Task { await server.stop() } }
        for (offset, want) in zip(offsets, expected) {
            let body = Array(bytes[0..<offset])
            let answer = try await HTTPClient.upload(server.uploadURL, body)
            #expect(answer.status == 201, "cut at \(offset): \(answer.text)")
            #expect(answer.text.contains("cut at byte"), "\(answer.text)")
            #expect(answer.text.contains("kept \(want.lines) complete lines, dropped \(want.partial) bytes"), "cut at \(offset): \(answer.text)")
            #expect(answer.headers["x-apitrace-dropped-bytes"] == String(want.partial))
            let stored = try #require(answer.text.components(separatedBy: " (in ").dropFirst().first?.prefix { $0 != ")" }.description)
            let back = Self.readBack(try Self.lastSegment(of: stored, in: target))
            #expect(back.problem == nil, "stored file for cut at \(offset) is not complete: \(String(describing: back.problem))")
            #expect(back.lines == want.lines && back.sha256 == want.sha256, "cut at \(offset): read back \(back.lines) lines, expected \(want.lines)")
            // At a real flush point the writer had written whole lines only.
            if points.contains(offset) { #expect(want.partial == 0) }
        }
        // Sending a cut body again is answered "already stored", not stored twice.
        let again = try await HTTPClient.upload(server.uploadURL, Array(bytes[0..<points[3]]))
        #expect(again.status == 200 && again.text.hasPrefix("already stored"))
        let metrics = server.collector.metrics.snapshot
        #expect(metrics.accepted == offsets.count && metrics.salvaged == offsets.count && metrics.duplicates == 1)
        // One producer's cuts of one file: appended to its one open file.
        #expect(TraceFiles.allFiles(under: target.path).count == 1)
    }

    @Test("the uploader finishes a killed app's file before sending it: stored once as a complete file with every complete line, then deleted")
    func uploaderFinishesCutFile() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let path = try await Self.killedWritersFile(source, events: 300)
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
        let want = try #require(try await Self.expected(path, offsets: [size]).first)

        let server = try await RunningCollector.start(try TraceCollector(configuration: .init(directory: target.path, tokens: [Self.token])))
        defer { Task { await server.stop() } }
        let log = Recorded<String>()
        let uploader = TraceUploader(configuration: .init(
            directory: source.path, endpoint: URL(string: server.uploadURL)!, token: Self.token, minimumFileAge: .zero,
            scanInterval: .milliseconds(50), diagnostics: { log.append($0) }))
        uploader.start()
        try await waitUntil("the delivery") { uploader.statistics.delivered == 1 }
        await uploader.stop()
        #expect(source.traceFiles.isEmpty)
        #expect(uploader.statistics.rejected == 0)
        let stored = TraceFiles.allFiles(under: target.path)
        try #require(stored.count == 1)
        let back = Self.readBack(target.file(stored[0]))
        #expect(back.problem == nil)
        #expect(back.lines == want.lines && back.sha256 == want.sha256)
        // The collector got a complete file: the uploader had finished it.
        #expect(server.collector.metrics.snapshot.salvaged == 0)
        #expect(log.all.contains { $0.contains("left cut by a killed app") })
    }
}
