import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Periodic exports of a folder whose files get deleted: counters must never fall, and the
/// increase Prometheus computes between two scrapes must be the events that really arrived.
@Suite("Cumulative OpenMetrics export")
struct CumulativeExportTests {
    let folder = TemporaryDirectory()
    var dir: String { folder.path }

    /// A trace file of `count` requests (every tenth a 503) from app version `version`, written as
    /// plain JSON Lines or, with `gzip`, compressed by the system's gzip.
    func writeTrace(_ name: String, count: Int, version: String, gzip: Bool = false) throws -> String {
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"test","app_version":"\#(version)","started":"2026-11-22T09:00:00.000Z"}"#]
        for i in 0..<count {
            let status = i % 10 == 0 ? 503 : 200
            lines.append(#"{"type":"request","ts":"2026-11-22T09:00:\#(String(format: "%02d", i % 60)).000Z","method":"GET","route":"/apps/{id}","host":"api.example.com","status":\#(status),"duration_ms":\#(i % 700)}"#)
        }
        let path = dir + "/" + name
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        guard gzip else { return path }
        try #require(try run("/usr/bin/env", ["gzip", "-f", path]).status == 0)
        return path + ".gz"
    }

    /// `name{labels}` -> value of every sample in the text.
    func samples(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let space = line.lastIndex(of: " ")!
            out[String(line[..<space])] = Double(line[line.index(after: space)...])!
        }
        return out
    }

    /// What Prometheus' `increase()` sees between two scrapes of one counter: a fall is a reset,
    /// after which the whole new value counts as increase.
    func prometheusIncrease(_ before: Double?, _ after: Double) -> Double {
        guard let before else { return after }
        return after < before ? after : after - before
    }

    func export(state: String, files: [String]) throws -> (text: String, export: CumulativeExport) {
        var export = try CumulativeExport.load(path: state, selection: "all")
        for file in files { _ = export.add(file: file) }
        export.forgetFiles(notIn: Set(files))
        try export.save(path: state)
        return (export.metrics.text(), export)
    }

    func requestTotal(_ samples: [String: Double], status: String? = nil) -> Double {
        samples.filter { $0.key.hasPrefix("apitrace_http_client_requests_total{") && (status == nil || $0.key.contains("http_response_status_code=\"\(status!)\"")) }.values.reduce(0, +)
    }

    @Test("deleting files between two exports: no counter falls, and increases are the new events only")
    func noFalseSpikeWhenFilesAreDeleted() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state.json"
        let a = try writeTrace("a.jsonl", count: 100, version: "2.0.0", gzip: true)
        var b = try writeTrace("b.jsonl", count: 50, version: "2.1.0")
        let first = samples(try export(state: state, files: [a, b]).text)
        #expect(requestTotal(first) == 150)
        #expect(first["apitrace_http_client_requests_total{http_request_method=\"GET\",url_template=\"/apps/{id}\",server_address=\"api.example.com\",app_version=\"2.0.0\",http_response_status_code=\"503\",error_type=\"503\",error_class=\"server\",outcome=\"server_error\"}"] == 10)

        // The writer's budget deletes a; b grows by 20 events; c arrives.
        try FileManager.default.removeItem(atPath: a)
        b = try writeTrace("b.jsonl", count: 70, version: "2.1.0")
        let c = try writeTrace("c.jsonl", count: 30, version: "2.1.0", gzip: true)
        let second = samples(try export(state: state, files: [b, c]).text)

        for (key, value) in first {
            let now = try #require(second[key], "\(key) vanished")
            #expect(now >= value, "\(key) fell from \(value) to \(now): Prometheus would see a reset and a false spike")
        }
        // Independent count: 20 new events in b and 30 in c, of which 2 + 3 are 503s.
        #expect(prometheusIncrease(requestTotal(first), requestTotal(second)) == 50)
        #expect(prometheusIncrease(requestTotal(first, status: "503"), requestTotal(second, status: "503")) == 5)
        let countKey = "http_client_request_duration_seconds_count{http_request_method=\"GET\",url_template=\"/apps/{id}\",server_address=\"api.example.com\",app_version=\"2.1.0\"}"
        #expect(prometheusIncrease(first[countKey], try #require(second[countKey])) == 50)

        // The same folder exported from scratch falls from 150 to 100: the bug the state prevents.
        var fresh = CumulativeExport(selection: "all")
        _ = fresh.add(file: b)
        _ = fresh.add(file: c)
        #expect(requestTotal(samples(fresh.metrics.text())) == 100)

        // A third run with nothing new adds nothing, and does not even read the unchanged files.
        var again = try CumulativeExport.load(path: state, selection: "all")
        #expect(again.add(file: b) == nil && again.add(file: c) == nil)
        let third = samples(try export(state: state, files: [b, c]).text)
        #expect(third == second)
        // A file that grows is read again, from its last counted event.
        b = try writeTrace("b.jsonl", count: 75, version: "2.1.0")
        let fourth = samples(try export(state: state, files: [b, c]).text)
        #expect(prometheusIncrease(requestTotal(second), requestTotal(fourth)) == 5)
    }

    @Test("a file renamed in over a counted one, same size or smaller, has all its events counted")
    func replacedFileIsCountedAfresh() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state.json"
        let a = try writeTrace("a.jsonl", count: 40, version: "2.0.0")
        #expect(requestTotal(samples(try export(state: state, files: [a]).text)) == 40)

        // Another file of the same size takes a's name (a collector re-receiving it, a restore):
        // the same requests under another app version, so the bytes differ but not their count.
        let other = try writeTrace("other.jsonl", count: 40, version: "2.0.1")
        #expect(try FileManager.default.attributesOfItem(atPath: other)[.size] as? Int
            == FileManager.default.attributesOfItem(atPath: a)[.size] as? Int)
        #expect(rename(other, a) == 0)
        let second = samples(try export(state: state, files: [a]).text)
        // Independent count: 40 before, 40 more now, 4 of them 503s from 2.0.1.
        #expect(requestTotal(second) == 80)
        #expect(second.filter { $0.key.contains("app_version=\"2.0.1\"") && $0.key.hasPrefix("apitrace_http_client_requests_total{") && $0.key.contains("\"503\"") }.values.reduce(0, +) == 4)

        // A shorter one renamed in is counted from its first event too, not from the old mark.
        let short = try writeTrace("short.jsonl", count: 10, version: "2.0.2")
        #expect(rename(short, a) == 0)
        #expect(requestTotal(samples(try export(state: state, files: [a]).text)) == 90)
    }

    /// Writes `bytes` into `path` in place (same inode) and gives it the modification time `seconds`.
    func rewriteInPlace(_ path: String, with bytes: Data, modified seconds: Double) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path)
    }

    /// `path`'s bytes with the first `old` after `offset` replaced by `new` (of the same length).
    func replacing(_ old: String, with new: String, in path: String, after offset: Int = 0) throws -> Data {
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let start = text.index(text.startIndex, offsetBy: offset)
        let range = try #require(text.range(of: old, range: start..<text.endIndex))
        text.replaceSubrange(range, with: new)
        return Data(text.utf8)
    }

    @Test("a touched file, or the same bytes copied over it, is not exported again: the state is what was exported, not a cache")
    func touchIsNotNew() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state.json"
        let a = try writeTrace("a.jsonl", count: 40, version: "2.0.0")
        let b = try writeTrace("b.jsonl", count: 25, version: "2.0.0", gzip: true)
        #expect(requestTotal(samples(try export(state: state, files: [a, b]).text)) == 65)
        // `touch`: only the modification time changes.
        for path in [a, b] {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_800_000_000)], ofItemAtPath: path)
        }
        var touched = try CumulativeExport.load(path: state, selection: "all")
        #expect(touched.add(file: a) == nil && touched.add(file: b) == nil, "a touched file was read again")
        #expect(requestTotal(samples(try export(state: state, files: [a, b]).text)) == 65)
        // The same bytes written over it in place (a `cp` of an identical copy, a sync tool), another time again.
        try rewriteInPlace(a, with: try Data(contentsOf: URL(fileURLWithPath: a)), modified: 1_800_000_100)
        #expect(requestTotal(samples(try export(state: state, files: [a, b]).text)) == 65)
    }

    @Test("a file rewritten in place at the same size, in its first or its last 4 KiB, has all its events counted")
    func sameSizeRewriteIsCountedAfresh() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state.json"
        let a = try writeTrace("a.jsonl", count: 200, version: "2.0.0")
        let before = try #require(FileStatus(path: a))
        #expect(before.size > 3 * 4096)
        #expect(requestTotal(samples(try export(state: state, files: [a]).text)) == 200)

        // The header's app version changed in place (a restore, or a new file on the same inode): same name, size and inode.
        try rewriteInPlace(a, with: try replacing(#""app_version":"2.0.0""#, with: #""app_version":"2.0.9""#, in: a), modified: 1_800_000_000)
        let after = try #require(FileStatus(path: a))
        #expect(after.inode == before.inode && after.size == before.size)
        let second = samples(try export(state: state, files: [a]).text)
        // Independent count: 200 before, 200 more now, all of them from 2.0.9.
        #expect(requestTotal(second) == 400)
        #expect(second.filter { $0.key.contains("app_version=\"2.0.9\"") && $0.key.hasPrefix("apitrace_http_client_requests_total{") }.values.reduce(0, +) == 200)

        // One status near the end changed in place (200 -> 503, same length): counted afresh again.
        let size = Int(after.size)
        try rewriteInPlace(a, with: try replacing(#""status":200"#, with: #""status":503"#, in: a, after: size - 2000), modified: 1_800_000_000)
        #expect(FileStatus(path: a)?.size == after.size)
        let third = samples(try export(state: state, files: [a]).text)
        #expect(requestTotal(third) == 600)
        #expect(requestTotal(third, status: "503") == 20 + 20 + 21)
        // Unchanged since: not read again, nothing counted twice.
        var again = try CumulativeExport.load(path: state, selection: "all")
        #expect(again.add(file: a) == nil)
    }

    @Test("a state file of version 1 is read, counts nothing twice, and is written as version 2 with each file's fingerprint")
    func versionOneState() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state.json"
        let a = try writeTrace("a.jsonl", count: 30, version: "2.0.0")
        let b = try writeTrace("b.jsonl", count: 12, version: "2.0.0", gzip: true)
        _ = try export(state: state, files: [a, b])
        let statusA = try #require(FileStatus(path: a)), statusB = try #require(FileStatus(path: b))
        // The version 1 layout, as apitrace wrote it before: events, sizes and inodes in three maps.
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])
        #expect(json["version"] as? Int == 2)
        json["files"] = nil
        json["version"] = 1
        json["counted"] = [a: 30, b: 12]
        json["sizes"] = [a: statusA.size, b: statusB.size]
        json["inodes"] = [a: statusA.inode, b: statusB.inode]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: state))

        // Read: the unchanged files are not counted again, and the state is written as version 2.
        #expect(requestTotal(samples(try export(state: state, files: [a, b]).text)) == 42)
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])
        #expect(written["version"] as? Int == 2 && written["counted"] == nil && written["sizes"] == nil)
        let files = try #require(written["files"] as? [String: [String: Any]])
        #expect(files[a]?["events"] as? Int == 30 && files[b]?["events"] as? Int == 12)
        #expect(files[a]?["size"] as? Int == Int(statusA.size) && (files[a]?["inode"] as? NSNumber)?.uint64Value == statusA.inode)
        // The fingerprint: FNV-1a of the first and last 4 KiB, computed here independently.
        func fnv(_ bytes: ArraySlice<UInt8>) -> String {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            let digits = String(h, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        for path in [a, b] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(files[path]?["fingerprint"] as? String == fnv(bytes.prefix(4096)) + "-" + fnv(bytes.suffix(4096)), "\(path)")
        }

        // From then on a same-size rewrite is noticed.
        try rewriteInPlace(a, with: try replacing(#""app_version":"2.0.0""#, with: #""app_version":"2.0.1""#, in: a), modified: 1_800_000_000)
        #expect(requestTotal(samples(try export(state: state, files: [a, b]).text)) == 72)
    }

    @Test("a state made for another selection, or that is not a state, is refused with the path and what to do")
    func badState() throws {
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state.json"
        try CumulativeExport(selection: "route=/apps").save(path: state)
        #expect(throws: CumulativeExportError.self) { try CumulativeExport.load(path: state, selection: "all") }
        do { _ = try CumulativeExport.load(path: state, selection: "all") } catch {
            #expect(error.description.hasPrefix(state + ": the state counts route=/apps"))
        }
        try Data("{\"not\": 1}".utf8).write(to: URL(fileURLWithPath: state))
        do { _ = try CumulativeExport.load(path: state, selection: "all"); Issue.record("accepted a non-state") } catch {
            #expect(error.description.contains("delete it to start over"))
        }
        #expect(try CumulativeExport.load(path: dir + "/absent.json", selection: "all").metrics.text() == OpenMetricsExporter().text())
    }
}
