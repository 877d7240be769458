import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

/// Writes `count` numbered log events through the real writer and returns the file and its events.
private func writtenFile(in dir: TemporaryDirectory, count: Int, flushEvery: Int? = nil) -> (path: String, events: [TraceEvent], flushedSize: Int?) {
    let writer = TraceFileWriter(configuration: .init(directory: dir.path, flushInterval: .seconds(3600)))
    var events: [TraceEvent] = []
    var flushedSize: Int?
    for i in 0..<count {
        let event = i % 3 == 0
            ? TraceEvent(timestamp: .init(millisecondsSince1970: 1_795_341_600_000 + Int64(i)), .request(.init(method: "GET", route: "/apps/{id}", status: 200 + i % 300, durationMs: Double(i) / 8)))
            : TraceEvent(timestamp: .init(millisecondsSince1970: 1_795_341_600_000 + Int64(i)), .log(.init(level: "info", message: "event \(i) " + String(repeating: "x", count: i % 50))))
        writer.append(event)
        events.append(event)
        if let flushEvery, i + 1 == flushEvery {
            writer.flush()
            flushedSize = (try? FileManager.default.attributesOfItem(atPath: writer.activeFilePath!)[.size] as? NSNumber)?.intValue
        }
    }
    writer.close()
    return (dir.traceFiles[0], events, flushedSize)
}

private func readAll(_ path: String) -> ([TraceEvent], TraceFileReader.Result) {
    var events: [TraceEvent] = []
    let result = TraceFileReader(path: path).forEachEvent { events.append($0) }
    return (events, result)
}

@Suite("Trace file reader")
struct TraceFileReaderTests {
    @Test("truncation at many offsets never crashes and keeps an exact prefix of the events, with a warning")
    func truncation() throws {
        let dir = TemporaryDirectory()
        let (path, events, _) = writtenFile(in: dir, count: 3000, flushEvery: 1500)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var offsets = Array(stride(from: 0, to: bytes.count, by: max(1, bytes.count / 60)))
        offsets += (1...12).map { bytes.count - $0 }
        var keptSome = false
        for offset in offsets {
            let cut = dir.file("cut.jsonl.gz")
            try bytes.prefix(offset).write(to: URL(fileURLWithPath: cut))
            let (read, result) = readAll(cut)
            #expect(read == Array(events.prefix(read.count)), "cut at \(offset)")
            #expect(!result.warnings.isEmpty, "cut at \(offset) gave no warning")
            if let warning = result.warnings.last {
                #expect(warning.description.contains(cut))
                #expect(warning.eventsKept == read.count)
            }
            keptSome = keptSome || read.count > 0
        }
        // Cutting only the 8-byte trailer (CRC and size) keeps every event.
        let cut = dir.file("trailer.jsonl.gz")
        try bytes.prefix(bytes.count - 8).write(to: URL(fileURLWithPath: cut))
        #expect(readAll(cut).0 == events)
        #expect(keptSome)
    }

    @Test("random byte flips after a flush point never crash and keep every event before it")
    func byteFlips() throws {
        let dir = TemporaryDirectory()
        let (path, events, flushedSize) = writtenFile(in: dir, count: 2000, flushEvery: 1000)
        let flushed = try #require(flushedSize)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        var rng = SystemRandomNumberGenerator()
        for round in 0..<60 {
            var bytes = original
            let at = Int.random(in: flushed..<bytes.count, using: &rng)
            bytes[at] ^= UInt8.random(in: 1...255, using: &rng)
            let damaged = dir.file("flip\(round).jsonl.gz")
            try bytes.write(to: URL(fileURLWithPath: damaged))
            let (read, result) = readAll(damaged)
            #expect(Array(read.prefix(1000)) == Array(events.prefix(1000)), "flip at \(at)")
            // Deflate finds some damage only at the end of a block or at the CRC, so lines after the
            // flush point may come out garbled before the warning: only the prefix is guaranteed.
            #expect(!result.warnings.isEmpty, "flip at \(at) went unnoticed")
        }
        // Flips anywhere, the header included, never crash.
        for _ in 0..<100 {
            var bytes = original
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[at] ^= UInt8.random(in: 1...255, using: &rng)
            let damaged = dir.file("anywhere.jsonl.gz")
            try bytes.write(to: URL(fileURLWithPath: damaged))
            _ = readAll(damaged)
        }
    }

    @Test("reads of one byte at a time (a pipe, a network file system) still see a gzip file (fuzz finding F1)")
    func oneByteReads() throws {
        let dir = TemporaryDirectory()
        let (path, events, _) = writtenFile(in: dir, count: 50)
        var reader = TraceFileReader(path: path)
        reader.readSize = 1
        var read: [TraceEvent] = []
        let result = reader.forEachEvent { read.append($0) }
        #expect(result.warnings.isEmpty)
        #expect(read == events)
    }

    @Test("concatenated gzip members read as one file")
    func concatenatedMembers() throws {
        let dir = TemporaryDirectory()
        let header = TraceFileHeader(producer: "p", started: .init(millisecondsSince1970: 0)).jsonLine + "\n"
        let first = everyEventType.prefix(5).map { $0.jsonLine + "\n" }.joined()
        let second = everyEventType.dropFirst(5).map { $0.jsonLine + "\n" }.joined()
        let a = try GzipDeflater.compress(Array((header + first).utf8))
        let b = try GzipDeflater.compress(Array(second.utf8), level: 1)
        let path = dir.file("joined.jsonl.gz")
        try Data(a + b).write(to: URL(fileURLWithPath: path))
        let (read, result) = readAll(path)
        #expect(result.warnings.isEmpty)
        #expect(read == everyEventType)
    }

    @Test("plain .jsonl files read too, with CRLF line ends and blank lines")
    func plainJSONLines() throws {
        let dir = TemporaryDirectory()
        let header = TraceFileHeader(producer: "p", started: .init(millisecondsSince1970: 0)).jsonLine
        let text = ([header] + everyEventType.map(\.jsonLine)).joined(separator: "\r\n") + "\r\n\r\n"
        let path = dir.file("plain.jsonl")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let (read, result) = readAll(path)
        #expect(result.warnings.isEmpty)
        #expect(read == everyEventType)
    }

    @Test("an invalid line in the middle is skipped with its line number; the rest is read")
    func invalidLine() throws {
        let dir = TemporaryDirectory()
        let header = TraceFileHeader(producer: "p", started: .init(millisecondsSince1970: 0)).jsonLine
        let lines = [header, everyEventType[0].jsonLine, #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","duration_ms":"slow"}"#, "garbage", everyEventType[1].jsonLine]
        let path = dir.file("mixed.jsonl.gz")
        try Data(try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))).write(to: URL(fileURLWithPath: path))
        let (read, result) = readAll(path)
        #expect(read == Array(everyEventType.prefix(2)))
        #expect(result.invalidLines == 2)
        #expect(result.warnings.map(\.description).contains { $0.hasPrefix("\(path):3:") && $0.contains("duration_ms") })
        #expect(result.warnings.map(\.description).contains { $0.hasPrefix("\(path):4:") })
    }

    @Test("a newer format version is skipped with a clear warning")
    func newerVersion() throws {
        let dir = TemporaryDirectory()
        var header = TraceFileHeader(producer: "p", started: .init(millisecondsSince1970: 0))
        header.version = 2
        let path = dir.file("v2.jsonl")
        try Data((header.jsonLine + "\n" + everyEventType[0].jsonLine + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let (read, result) = readAll(path)
        #expect(read.isEmpty)
        #expect(result.warnings.map(\.kind) == [.newerVersion(2)])
        #expect(result.warnings[0].description.contains("version 2"))
        #expect(!result.isUsable)
    }

    @Test("files that are not traces are named and skipped", arguments: [
        ("notes.jsonl", Data("hello\n".utf8)),
        ("empty.jsonl.gz", Data()),
        ("other.jsonl", Data(#"{"type":"request","ts":"2026-11-22T10:00:00Z"}"#.utf8 + [0x0A])),
        ("random.jsonl.gz", Data([0x1F, 0x8B, 0x08, 0, 1, 2, 3, 4, 5, 6, 7, 8])),
    ])
    func notTraces(name: String, contents: Data) throws {
        let dir = TemporaryDirectory()
        let path = dir.file(name)
        try contents.write(to: URL(fileURLWithPath: path))
        let (read, result) = readAll(path)
        #expect(read.isEmpty)
        #expect(!result.isUsable)
        #expect(!result.warnings.isEmpty)
        #expect(result.warnings.allSatisfy { $0.description.contains(path) })
    }

    @Test("a missing file is reported, not thrown")
    func missing() {
        let (_, result) = readAll("/nonexistent/trace.jsonl.gz")
        #expect(result.warnings.first?.description.contains("/nonexistent/trace.jsonl.gz") == true)
    }

    @Test("files read in parallel give the same results as one by one, in input order")
    func parallel() throws {
        let dir = TemporaryDirectory()
        var paths: [String] = []
        for i in 0..<6 {
            let sub = TemporaryDirectory("parallel\(i)")
            let (path, _, _) = writtenFile(in: sub, count: 200 + i * 50)
            let kept = dir.file("f\(i).jsonl.gz")
            try FileManager.default.copyItem(atPath: path, toPath: kept)
            paths.append(kept)
        }
        let counts = ParallelTraceReader.map(paths) { reader in reader.forEachEvent { _ in }.events }
        #expect(counts == (0..<6).map { 200 + $0 * 50 })
        #expect(TraceFileDiscovery.find([dir.path]).files == paths)
    }
}
