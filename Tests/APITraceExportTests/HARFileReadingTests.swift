import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The streamed HAR export's reading: files read on several threads (``HARFileReading``) and held
/// as compact records (``HAREntryRecord``) give the archive of one thread reading the files in turn.
@Suite("HAR file reading")
struct HARFileReadingTests {
    static let t = TraceTimestamp(millisecondsSince1970: 1_795_341_600_500)

    /// Eleven files: requests whose starts tie across files (so the order of files decides), one file
    /// of many blocks, hostile lines at known numbers, a file that is not gzip, one without requests.
    /// Returns the paths and, per file, the routes of its requests with their start times, in line order.
    static func fleet(in dir: TemporaryDirectory) throws -> (paths: [String], requests: [[(route: String, started: Int64)]], badLines: [String: [Int]]) {
        var paths: [String] = []
        var requests: [[(route: String, started: Int64)]] = []
        var badLines: [String: [Int]] = [:]
        for file in 0..<11 {
            let path = dir.file(TraceFileIdentity(started: t.adding(milliseconds: Int64(file)), producer: String(format: "%08x", file), sequence: 1).fileName)
            paths.append(path)
            if file == 7 {
                try Data("not gzip at all\n".utf8).write(to: URL(fileURLWithPath: path))
                requests.append([])
                continue
            }
            var lines = [TraceFileHeader(producer: String(format: "%08x", file), started: t).jsonLine]
            var kept: [(route: String, started: Int64)] = []
            let count = file == 3 ? 6000 : (file == 9 ? 0 : 40 + file)
            for i in 0..<count {
                // Three end times and two durations: starts tie within and across files.
                let end = t.adding(milliseconds: Int64((i * 7 + file) % 3) * 1000)
                let duration = i % 2 == 0 ? 1000.0 : 0.4
                let route = "/f\(file)/r\(i)/" + String(repeating: "x", count: file == 3 ? 60 : 1)
                lines.append(TraceEvent(timestamp: end, session: "s\(file % 3)", .request(.init(
                    method: "GET", route: route, host: "h.example", status: 200, durationMs: duration))).jsonLine)
                kept.append((route, end.millisecondsSince1970 - Int64(duration.rounded())))
                if i % 17 == 5 {
                    lines.append(#"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","status":200,"duration_ms":1}"#)
                    badLines[path, default: []].append(lines.count)
                }
                if i % 23 == 3 { lines.append(TraceEvent(timestamp: end, .log(.init(level: "info", message: "not a request"))).jsonLine) }
            }
            try Data(try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))).write(to: URL(fileURLWithPath: path))
            requests.append(kept)
        }
        return (paths, requests, badLines)
    }

    static func export(_ paths: [String], threads: Int, memoryLimit: Int, in dir: TemporaryDirectory, session: String? = nil) throws -> (archive: Data, read: TraceExportReader.Outcome) {
        var har = HARStream(session: session.map(TextPattern.init), memoryLimit: memoryLimit, temporaryDirectory: dir.path)
        let read = try TraceExportReader().read(paths, into: &har, threads: threads)
        var archive = Data()
        try har.write { archive.append(contentsOf: $0) }
        return (archive, read)
    }

    @Test("on 1, 2 and 4 threads, spilling or not: the same archive, entries in start order with ties in file and line order, and every file's warnings in file order naming the file and line")
    func threadsKeepReadingOrder() throws {
        let dir = TemporaryDirectory()
        let fleet = try Self.fleet(in: dir)
        // The order one thread reading the files in turn gives: stable by start time.
        let expected = fleet.requests.flatMap { $0 }.enumerated().sorted { ($0.element.started, $0.offset) < ($1.element.started, $1.offset) }.map(\.element.route)
        let one = try Self.export(fleet.paths, threads: 1, memoryLimit: 16 << 20, in: dir)
        let log = try #require((try JSONSerialization.jsonObject(with: one.archive) as? [String: Any])?["log"] as? [String: Any])
        let routes = try #require(log["entries"] as? [[String: Any]]).map { $0["_route"] as? String ?? "" }
        #expect(routes == expected)
        #expect(one.read.usableFiles == 10)
        var named: [String: [Int]] = [:]
        for warning in one.read.warnings {
            if case .invalidLine(let line, let reason) = warning.kind {
                #expect(reason.contains("route"), "\(warning)")
                named[warning.path, default: []].append(line)
            }
        }
        // Up to 20 lines are listed per file, the rest counted.
        #expect(named == fleet.badLines.mapValues { Array($0.prefix(TraceFileReader.LineWarnings.limit)) })
        #expect(one.read.warnings.contains { $0.path == fleet.paths[7] })
        let order = one.read.warnings.map { fleet.paths.firstIndex(of: $0.path) ?? -1 }
        #expect(order == order.sorted())
        for threads in [2, 4] {
            for memoryLimit in [16 << 20, 48 << 10] {
                let other = try Self.export(fleet.paths, threads: threads, memoryLimit: memoryLimit, in: dir)
                #expect(other.archive == one.archive, "threads \(threads), memory \(memoryLimit)")
                #expect(other.read.warnings == one.read.warnings && other.read.usableFiles == one.read.usableFiles)
            }
        }
        let session = try Self.export(fleet.paths, threads: 4, memoryLimit: 48 << 10, in: dir, session: "s1")
        let kept = try #require(((try JSONSerialization.jsonObject(with: session.archive) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(!kept.isEmpty && kept.allSatisfy { $0["_session"] as? String == "s1" })
        #expect(kept.count == fleet.requests.enumerated().filter { $0.offset % 3 == 1 }.map(\.element.count).reduce(0, +))
    }

    @Test("a temporary folder that cannot hold requests stops every reading thread: an error naming the folder, no hang, nothing left running", .timeLimit(.minutes(2)))
    func spillFailureStopsTheThreads() throws {
        let dir = TemporaryDirectory()
        let fleet = try Self.fleet(in: dir)
        let missing = dir.file("gone/deeper")
        for threads in [1, 2, 4] {
            var har = HARStream(memoryLimit: 4 << 10, temporaryDirectory: missing)
            let error = #expect(throws: SortSpillError.self) {
                _ = try TraceExportReader().read(fleet.paths, into: &har, threads: threads)
            }
            #expect(error?.description.contains(missing) == true, "\(String(describing: error))")
        }
    }

    @Test("a caller's keepEvent filter is asked on one thread; its choice is the archive's")
    func keepEventFilter() throws {
        let dir = TemporaryDirectory()
        let fleet = try Self.fleet(in: dir)
        final class Calls: @unchecked Sendable { var count = 0 }
        let calls = Calls()
        var har = HARStream(memoryLimit: 1 << 20, temporaryDirectory: dir.path)
        // Not thread-safe on purpose: a count that is exact shows the calls never overlapped.
        let reader = TraceExportReader(keepEvent: { event in
            calls.count += 1
            guard case .request(let request) = event.payload else { return false }
            return request.route.hasPrefix("/f3/")
        })
        _ = try reader.read(fleet.paths, into: &har, threads: 4)
        var archive = Data()
        try har.write { archive.append(contentsOf: $0) }
        let entries = try #require(((try JSONSerialization.jsonObject(with: archive) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == fleet.requests[3].count)
        #expect(calls.count == fleet.requests.map(\.count).reduce(0, +))
    }

    @Test("a held record reads back as the scanned request it was made of; every cut or grown copy reads as damaged, never past its bytes")
    func recordsRoundTrip() throws {
        let lines = [
            #"{"type":"request","ts":"2026-11-22T10:00:00.250Z","method":"POST","route":"/a/\u00e9\"q","host":"h","status":503,"duration_ms":12.5,"bytes_in":7,"bytes_out":9,"error":"E","attempt":3,"session":"s","trace_id":"t","dns_ms":1,"connect_ms":2,"tls_ms":1.5,"ttfb_ms":4,"protocol":"h2","reused":false}"#,
            #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"","duration_ms":0,"error":"timeout"}"#,
        ]
        for line in lines {
            // The record's texts are slices of the line: used while the line's bytes are.
            var scanner = TraceRecordScanner()
            var bytes: [UInt8] = []
            var direct = JSONOutput(), held = JSONOutput()
            let scanned = Array(line.utf8).withUnsafeBytes { line in
                let scanned = scanner.scan(line)
                if scanned == .event {
                    HAREntryRecord.append(scanner.record, to: &bytes)
                    HAREntryWriter.append(scanner.record, to: &direct)
                }
                return scanned
            }
            try #require(scanned == .event, "\(scanned)")
            let record = try #require(bytes.withUnsafeBytes { HAREntryRecord.record($0) })
            bytes.withUnsafeBytes { HAREntryWriter.append(HAREntryRecord.record($0)!, to: &held) }
            #expect(held.bytes == direct.bytes)
            #expect(record.timestamp == scanner.record.timestamp && record.status == 503 || record.status == nil)
            for cut in 0..<bytes.count {
                #expect(bytes.withUnsafeBytes { HAREntryRecord.record(UnsafeRawBufferPointer(rebasing: $0[0..<cut])) } == nil)
            }
            #expect((bytes + [0]).withUnsafeBytes { HAREntryRecord.record($0) } == nil)
            // Any flags over the same bytes: read as damaged or as some record, within the bytes.
            for bit in 0..<32 {
                var flipped = bytes
                flipped[bit / 8] ^= UInt8(1 << (bit % 8))
                _ = flipped.withUnsafeBytes { HAREntryRecord.record($0) }
            }
        }
    }
}
