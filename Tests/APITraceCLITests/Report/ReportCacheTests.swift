import APITraceFormat
import APITraceTestSupport
// timespec: its initializer comes from CoreFoundation once the libraries of this target are imported.
import CoreFoundation
import Foundation
import Testing

/// `apitrace report` with its per-file summary cache, through the built executable: the cache may
/// make a run faster, never different.
@Suite("apitrace report's summary cache")
struct ReportCacheTests {
    static let header = #"{"type":"header","format":"apitrace","version":1,"producer":"evil","app":"Otec","app_version":"2.1","started":"2026-11-22T10:00:00.000Z"}"#
    static func request(_ second: Int, status: Int = 200, minute: Int = 0) -> String {
        #"{"type":"request","ts":"2026-11-22T10:\#(String(format: "%02d", minute)):\#(String(format: "%02d", second)).000Z","method":"GET","route":"/apps/{id}","status":\#(status),"duration_ms":12.5,"session":"s\#(second % 7)"}"#
    }

    /// Realistic traffic of one producer (four files, three finished) as plain `.jsonl`, so a test
    /// can rewrite a file in place at the same size; and, optionally, hostile files of a second.
    static func folder(hostile: Bool) async throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        let apitrace = try builtProduct("apitrace").path
        let generated = dir.path + "/generated"
        let made = try await runOffPool(apitrace, ["generate", "--events", "6000", "--files", "4", "--seed", "21", "--out", generated])
        try #require(made.status == 0)
        // Decompressed by gzip itself, then moved up beside the hostile files.
        let unzipped = try await runOffPool("/bin/sh", ["-c", "gzip -d \"$0\"/*.jsonl.gz && mv \"$0\"/*.jsonl \"$1\"/ && rmdir \"$0\"", generated, dir.path])
        try #require(unzipped.status == 0, "\(String(decoding: unzipped.stderr, as: UTF8.self))")
        guard hostile else { return dir }
        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: dir.path + "/" + name))
        }
        // Finished files of producer "evil" (each followed by a later one), each damaged its own way.
        let bad = [
            #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps","status":200,"duration_ms":5,"sample_rate":1e-300}"#,
            #"{"type":"error","ts":"2026-11-22T10:00:02.000Z","identity":"X","suppressed":9223372036854775000}"#,
            #"{"type":"request","ts":"2026-11-22T10:00:03.000Z","method":"GET","route":"/apps","status":200,"duration_ms":5,"bytes_in":9223372036854775807}"#,
            "this is not json",
            #"{"type":"request","ts":"0001-01-01T00:00:00.000Z","method":"GET","route":"/apps","status":200,"duration_ms":5}"#,
        ]
        try write("20261122T100000Z-evil-0001.jsonl", ([header] + (0..<30).map { request($0, status: $0 % 5 == 0 ? 503 : 200) } + bad).joined(separator: "\n") + "\n" + #"{"type":"request","ts":"#)
        let truncated = try GzipDeflater.compress(Array(([header] + (0..<40).map { request($0, minute: 5) }).joined(separator: "\n").utf8))
        try Data(truncated.dropLast(25)).write(to: URL(fileURLWithPath: dir.path + "/20261122T100500Z-evil-0002.jsonl.gz"))
        try write("20261122T101000Z-evil-0003.jsonl", "hello, not a trace\n")
        try write("20261122T101500Z-evil-0004.jsonl", header.replacingOccurrences(of: #""version":1"#, with: #""version":99"#) + "\n" + request(1) + "\n")
        try write("20261122T102000Z-evil-0005.jsonl", ([header] + (0..<10).map { request($0, minute: 20) }).joined(separator: "\n") + "\n")
        return dir
    }

    struct Run: Equatable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func report(_ arguments: [String]) async throws -> Run {
        let result = try await runOffPool(try builtProduct("apitrace").path, ["report"] + arguments)
        return Run(status: result.status, stdout: String(decoding: result.stdout, as: UTF8.self), stderr: String(decoding: result.stderr, as: UTF8.self))
    }

    /// The cache's store file.
    static func storeFile(_ cache: String) -> String { cache + "/report.cache" }

    /// Files with an entry in the cache's store (Docs/report.md: one store file, entries keyed by
    /// absolute path), read through the store's own decoder; nil when the file is not a whole store.
    static func storedFiles(_ cache: String) -> [String]? {
        guard let bytes = FileManager.default.contents(atPath: storeFile(cache)),
              let entries = FileCacheStore.decodeAll(Array(bytes), client: "report-summaries 4") else { return nil }
        return entries.keys.filter { $0.hasPrefix("/") }.sorted()
    }

    static func entryCount(_ cache: String) -> Int { storedFiles(cache)?.count ?? 0 }

    @Test("text and JSON are byte-identical between --no-cache, cold and warm runs, over realistic and hostile files and with each filter")
    func identicalOutputs() async throws {
        let dir = try await Self.folder(hostile: true)
        let variants: [[String]] = [
            [], ["--since", "2026-11-22T08:03:00Z"], ["--until", "2026-11-22T08:04:00Z"], ["--app-version", "2.3.0"],
            ["--route", "/apps/*"], ["--host", "api.example.com"], ["--bucket", "5m"], ["--by", "app_version"],
        ]
        for (i, variant) in variants.enumerated() {
            for format in ["json", "text"] {
                let cache = dir.path + "/cache-\(i)-\(format)"
                let arguments = ["--format", format] + variant + [dir.path]
                let uncached = try await Self.report(["--no-cache", "--cache-dir", cache] + arguments)
                #expect(uncached.status == 0, "\(variant): \(uncached.stderr)")
                #expect(!FileManager.default.fileExists(atPath: cache), "--no-cache created the cache folder")
                let cold = try await Self.report(["--cache-dir", cache] + arguments)
                let warm = try await Self.report(["--cache-dir", cache] + arguments)
                #expect(cold == uncached, "\(variant) \(format): the cold run differs")
                #expect(warm == uncached, "\(variant) \(format): the warm run differs")
                // Every warning of the damaged files is there on the warm run too (named by file and line).
                if variant.isEmpty {
                    for expected in ["evil-0001.jsonl:", "evil-0002.jsonl.gz: truncated", "evil-0003.jsonl", "version 99"] {
                        #expect(warm.stderr.contains(expected), "\(format): no warning with \(expected): \(warm.stderr)")
                    }
                }
            }
        }
        // Without filters every finished file got an entry: 3 generated and 4 damaged ones.
        let stored = Self.entryCount(dir.path + "/cache-0-json")
        #expect(stored >= 6 && stored <= 7, "\(stored)")
    }

    /// Server errors in plain trace files, counted from the text alone (not through apitrace's reader).
    static func serverErrors(_ folder: String) throws -> Int {
        var count = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".jsonl") {
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            count += text.split(separator: "\n").filter { $0.contains(#""type":"request""#) && $0.contains(#""status":5"#) }.count
        }
        return count
    }

    @Test("a file rewritten at the same size, or replaced by another with the same modification time, is read again")
    func replacedFile() async throws {
        let dir = try await Self.folder(hostile: false)
        let cache = dir.path + "/cache"
        let arguments = ["--format", "json", "--cache-dir", cache, dir.path]
        _ = try await Self.report(arguments)
        #expect(Self.entryCount(cache) == 3)
        let first = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jsonl") }.sorted().first)
        let path = dir.path + "/" + first

        func serverErrorsReported() async throws -> Int {
            let run = try await Self.report(arguments)
            #expect(run == (try await Self.report(["--no-cache"] + arguments)))
            let totals = try #require((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["totals"] as? [String: Any])
            return try #require(totals["server_errors"] as? Int)
        }
        let before = try await serverErrorsReported()
        #expect(before == (try Self.serverErrors(dir.path)))

        // 1. Same size, same inode, new content (one 200 turned into a 503 in place).
        let old = try #require(FileStatus(path: path))
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let ok = try #require(text.range(of: #""status":200"#))
        text.replaceSubrange(ok, with: #""status":503"#)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
        let rewritten = try #require(FileStatus(path: path))
        #expect(rewritten.size == old.size && rewritten.inode == old.inode)
        #expect(try await serverErrorsReported() == before + 1)
        #expect(before + 1 == (try Self.serverErrors(dir.path)))

        // 2. Same size and the same modification time to the nanosecond, another inode.
        let ok2 = try #require(text.range(of: #""status":200"#))
        text.replaceSubrange(ok2, with: #""status":503"#)
        let replacement = dir.path + "/replacement.tmp"
        try Data(text.utf8).write(to: URL(fileURLWithPath: replacement))
        let mtime = rewritten.modifiedNanoseconds
        var times = [timespec(tv_sec: Int(mtime / 1_000_000_000), tv_nsec: Int(mtime % 1_000_000_000)),
                     timespec(tv_sec: Int(mtime / 1_000_000_000), tv_nsec: Int(mtime % 1_000_000_000))]
        #expect(utimensat(AT_FDCWD, replacement, &times, 0) == 0)
        #expect(rename(replacement, path) == 0)
        let replaced = try #require(FileStatus(path: path))
        #expect(replaced.size == rewritten.size && replaced.modifiedNanoseconds == rewritten.modifiedNanoseconds)
        #expect(replaced.inode != rewritten.inode)
        #expect(try await serverErrorsReported() == before + 2)
    }

    @Test("a truncated, bit-flipped, garbage or empty cache is ignored with a warning naming it: the files are read again, nothing crashes")
    func corruptedEntries() async throws {
        let dir = try await Self.folder(hostile: true)
        let cache = dir.path + "/cache"
        let arguments = ["--format", "json", "--cache-dir", cache, dir.path]
        let reference = try await Self.report(["--no-cache"] + arguments)
        _ = try await Self.report(arguments)
        let storePath = Self.storeFile(cache)
        try #require(Self.entryCount(cache) >= 5)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: storePath)))
        var random = SystemRandomNumberGenerator()
        for damage in 0..<5 {
            var bytes = original
            switch damage {
            case 0: bytes = Array(bytes.prefix(bytes.count / 2))
            case 1: bytes[bytes.count / 2] ^= 0x40
            case 2: bytes = (0..<bytes.count).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 3: bytes = []
            default:
                // The header kept, then the entry count and the first entry's length claiming far more than is there.
                bytes.replaceSubrange(24..<32, with: [UInt8](repeating: 0xFF, count: 8))
            }
            try Data(bytes).write(to: URL(fileURLWithPath: storePath))
            let damaged = try await Self.report(arguments)
            #expect(damaged.status == reference.status && damaged.stdout == reference.stdout, "damage \(damage)")
            // Besides the report's own warnings, at most a warning naming the cache file (a flipped bit
            // in an entry the run did not need goes unseen); one for every damage to the store's layout.
            let lines = damaged.stderr.split(separator: "\n", omittingEmptySubsequences: false)
            let aboutCache = lines.filter { $0.hasPrefix("apitrace: warning: ") && $0.contains(storePath) }
            #expect(lines.filter { !aboutCache.contains($0) }.joined(separator: "\n") == reference.stderr, "damage \(damage): \(damaged.stderr)")
            if damage != 1 { #expect(aboutCache.count == 1, "damage \(damage): \(damaged.stderr)") }
            // The damaged run rebuilt the store: the next one is served from it, and says nothing of it.
            #expect(try await Self.report(arguments) == reference, "damage \(damage)")
            #expect(Self.entryCount(cache) >= 5, "damage \(damage)")
        }
    }

    @Test("four reports started at once on one empty cache agree with an uncached one and leave one whole store")
    func concurrentRuns() async throws {
        let dir = try await Self.folder(hostile: true)
        let cache = dir.path + "/cache"
        let arguments = ["--format", "json", "--cache-dir", cache, dir.path]
        let reference = try await Self.report(["--no-cache"] + arguments)
        async let a = Self.report(arguments)
        async let b = Self.report(arguments)
        async let c = Self.report(arguments)
        async let d = Self.report(arguments)
        for run in try await [a, b, c, d] { #expect(run == reference) }
        #expect(try await Self.report(arguments) == reference)
        // One whole store holding every finished file (3 generated, 4 damaged ones), its lock, and nothing else.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0 != "report.cache" && $0 != "report.cache.lock" }
        #expect(leftovers.isEmpty, "\(leftovers)")
        let stored = try #require(Self.storedFiles(cache))
        #expect(stored.count >= 6 && stored.count <= 7, "\(stored)")
    }

    @Test("a cache folder that cannot be written only reads; a read-only trace folder is reported as usual")
    func readOnly() async throws {
        let dir = try await Self.folder(hostile: true)
        let arguments = ["--format", "json", dir.path]
        let reference = try await Self.report(["--no-cache"] + arguments)
        // A folder under a regular file can never be created, even by root (which chmod cannot stop).
        let blocker = dir.path + "/blocker"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let unwritable = try await Self.report(["--cache-dir", blocker + "/cache"] + arguments)
        #expect(unwritable == reference)
        #expect(!FileManager.default.fileExists(atPath: blocker + "/cache"))
        // A populated cache and trace folder made read-only still serve the report.
        let cache = dir.path + "/cache"
        _ = try await Self.report(["--cache-dir", cache] + arguments)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: cache)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
            try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: cache)
        }
        #expect(try await Self.report(["--cache-dir", cache] + arguments) == reference)
    }

    @Test("the file a producer is still writing is never cached: lines appended to it count at once")
    func liveFileAlwaysRead() async throws {
        let dir = try await Self.folder(hostile: false)
        let cache = dir.path + "/cache"
        let arguments = ["--format", "json", "--cache-dir", cache, dir.path]
        _ = try await Self.report(arguments)
        // Four files of one producer: the three it has moved on from are cached, the last is not.
        #expect(Self.entryCount(cache) == 3)
        let last = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jsonl") }.sorted().last)
        let handle = try #require(FileHandle(forUpdatingAtPath: dir.path + "/" + last))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((#"{"type":"request","ts":"2026-11-22T08:04:59.000Z","method":"GET","route":"/x","status":500,"duration_ms":1}"# + "\n").utf8))
        try handle.close()
        let run = try await Self.report(arguments)
        #expect(run == (try await Self.report(["--no-cache"] + arguments)))
        let totals = try #require((try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])?["totals"] as? [String: Any])
        #expect(totals["server_errors"] as? Int == (try Self.serverErrors(dir.path)))
    }
}
