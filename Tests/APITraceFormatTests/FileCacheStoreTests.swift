import APITraceFormat
import APITraceTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// The one per-file cache store under the alert's and the report's caches: real files on disk,
/// hostile bytes, an appended file's prefix, and stores kept across runs over other folders.
@Suite struct FileCacheStoreTests {
    static let client = "test-client 1"

    func entry(_ i: Int, prefix: AppendedPrefix? = nil) -> FileCacheStore.Entry {
        FileCacheStore.Entry(status: FileStatus(size: Int64(100 + i), modifiedNanoseconds: Int64(i) * 1_000, inode: UInt64(7 + i)), prefix: prefix,
                             sections: ["a": Array("entry \(i)".utf8), "b\u{1}x": [UInt8](repeating: UInt8(i & 0xFF), count: i)])
    }

    @Test func entriesRoundTripThroughTheFileAndOnlyUsedOnesAreKept() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("cache")
        let store = FileCacheStore(path: path, client: Self.client)
        #expect(store.problem == nil && store.entry("/t/0") == nil)
        for i in 0..<50 { store.update("/t/\(i)") { $0 = entry(i, prefix: i % 2 == 0 ? AppendedPrefix(offset: Int64(i), headHash: 1, tailHash: 2) : nil) } }
        store.save()
        let reopened = FileCacheStore(path: path, client: Self.client)
        #expect(reopened.problem == nil)
        for i in 0..<50 { #expect(reopened.entry("/t/\(i)") == entry(i, prefix: i % 2 == 0 ? AppendedPrefix(offset: Int64(i), headHash: 1, tailHash: 2) : nil)) }
        // A run that uses ten entries and changes one keeps those ten; the nine it did not change are copied as read.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let run = FileCacheStore(path: path, client: Self.client)
        for i in 0..<10 { run.markUsed("/t/\(i)") }
        run.update("/t/3") { $0?.sections["a"] = [9, 9] }
        run.save()
        let kept = try #require(FileCacheStore.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: path))), client: Self.client))
        #expect(kept.count == 10)
        #expect(kept["/t/3"]?.sections["a"] == [9, 9] && kept["/t/4"] == entry(4, prefix: AppendedPrefix(offset: 4, headHash: 1, tailHash: 2)))
        #expect(kept["/t/10"] == nil)
        // A run that changes nothing and uses what the file holds leaves the file alone.
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        let idle = FileCacheStore(path: path, client: Self.client)
        for i in 0..<10 { idle.markUsed("/t/\(i)") }
        let inode = FileStatus(path: path)?.inode
        idle.save()
        let untouched = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(FileStatus(path: path)?.inode == inode && untouched == after && after != before)
    }

    @Test func everyCutAndEveryForgedCountIsRefusedWithAWarningNamingTheFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("cache")
        var entries: [String: FileCacheStore.Entry] = [:]
        for i in 0..<20 { entries["/t/\(i)"] = entry(i) }
        let valid = FileCacheStore.encodeAll(entries, client: Self.client)
        #expect(FileCacheStore.decodeAll(valid, client: Self.client) == entries)
        #expect(FileCacheStore.decodeAll(valid, client: "another 1") == nil)
        for cut in stride(from: 0, to: valid.count, by: max(1, valid.count / 300)) {
            #expect(FileCacheStore.decodeAll(Array(valid.prefix(cut)), client: Self.client) == nil, "cut at \(cut)")
        }
        // Counts claiming billions: entries, a record's length, its sections.
        let countAt = 12 + Self.client.utf8.count
        for at in [countAt, countAt + 4, countAt + 8 + 4 + 4 + 24 + 1] {
            var forged = valid
            forged.replaceSubrange(at..<(at + 4), with: [0xFF, 0xFF, 0xFF, 0x7F])
            #expect(FileCacheStore.decodeAll(forged, client: Self.client) == nil, "count at \(at)")
            try Data(forged).write(to: URL(fileURLWithPath: path))
            let store = FileCacheStore(path: path, client: Self.client)
            // Refused as a whole, or (a section count inside one record) that entry alone, said on first use.
            _ = store.entry("/t/0")
            #expect(store.problem?.contains(path) == true, "\(store.problem ?? "nothing said")")
        }
        var version = valid
        version.replaceSubrange(4..<8, with: [2, 0, 0, 0])
        try Data(version).write(to: URL(fileURLWithPath: path))
        #expect(FileCacheStore(path: path, client: Self.client).problem?.contains(path) == true)
        // A FIFO at the name never blocks, and is named.
        let fifo = dir.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(FileCacheStore(path: fifo, client: Self.client).problem?.contains(fifo) == true)
    }

    @Test func anAppendedPrefixHoldsWhileTheBytesBeforeItAreUnchanged() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("open.jsonl.gz")
        let first = try GzipDeflater.compress(Array("first member\n".utf8), level: 5)
        let second = try GzipDeflater.compress(Array("second member\n".utf8), level: 5)
        try Data(first).write(to: URL(fileURLWithPath: path))
        let mark = try #require(AppendedPrefix(path: path, offset: Int64(first.count)))
        // Appending keeps the prefix.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: second)
        try handle.close()
        #expect(AppendedPrefix(path: path, offset: mark.offset) == mark)
        // Rewritten with other bytes, or cut back below the offset: it no longer holds.
        try Data(second + first).write(to: URL(fileURLWithPath: path))
        #expect(AppendedPrefix(path: path, offset: mark.offset) != mark)
        try Data(first.prefix(first.count - 1)).write(to: URL(fileURLWithPath: path))
        #expect(AppendedPrefix(path: path, offset: mark.offset) == nil)
        // Reading from the prefix reads only the members after it.
        try Data(first + second).write(to: URL(fileURLWithPath: path))
        var reader = TraceFileReader(path: path)
        reader.startOffset = mark.offset
        var lines: [String] = []
        let result = reader.forEachRawLine { bytes, _ in lines.append(String(decoding: bytes, as: UTF8.self)); return true }
        #expect(lines == ["second member"] && result.problem == nil && result.endOffset == Int64(first.count + second.count))
    }

    @Test func aKeepingStoreKeepsWhatItsClientWantsAndWhatAnotherProcessSavedMeanwhile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("cache")
        let keeping = FileCacheStore.Retention.keeping(maximumBytes: 1 << 20) { !$0.hasPrefix("/gone/") }
        let first = FileCacheStore(path: path, client: Self.client, retention: keeping)
        for i in 0..<6 { first.update((i < 3 ? "/kept/" : "/gone/") + "\(i)") { $0 = entry(i) } }
        #expect(first.save() == .written(evicted: 0))
        // A run that uses nothing and changes nothing writes nothing.
        let idle = FileCacheStore(path: path, client: Self.client, retention: keeping)
        idle.markUsed("/kept/0")
        #expect(idle.save() == .unchanged)

        // Two runs read the same file; B saves first, then A: A keeps B's entries, and drops the
        // unused entries its client no longer wants (files that are gone).
        let a = FileCacheStore(path: path, client: Self.client, retention: keeping)
        let b = FileCacheStore(path: path, client: Self.client, retention: keeping)
        b.update("/b/1") { $0 = entry(11) }
        b.update("/kept/1") { $0 = entry(21) }
        #expect(b.save() == .written(evicted: 0))
        a.update("/a/1") { $0 = entry(12) }
        a.markUsed("/gone/3")
        #expect(a.save() == .written(evicted: 0))
        let kept = try #require(FileCacheStore.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: path))), client: Self.client))
        #expect(Set(kept.keys) == ["/kept/0", "/kept/1", "/kept/2", "/gone/3", "/a/1", "/b/1"])
        // B's newer entry of a file A only read wins over the copy A read.
        #expect(kept["/kept/1"] == entry(21) && kept["/a/1"] == entry(12) && kept["/b/1"] == entry(11))
        // Only the store and its lock file in the folder.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)) == ["cache", "cache.lock"])
    }

    @Test func aSaveWhoseLockStaysTakenGivesUpWithinItsBoundNamingTheLockAndSavesLater() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("cache")
        let keeping = FileCacheStore.Retention.keeping(maximumBytes: 1 << 20) { _ in true }
        // A run that stopped (^Z) while saving holds the lock: here a second open of the lock file,
        // whose flock conflicts with the store's as another process's would (locks belong to the
        // open file, not the process).
        let holder = open(path + ".lock", O_RDWR | O_CREAT, 0o600)
        #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
        let store = FileCacheStore(path: path, client: Self.client, retention: keeping)
        store.update("/a") { $0 = entry(1) }
        let started = Date()
        let outcome = store.save()
        let waited = Date().timeIntervalSince(started)
        guard case .failed(let reason) = outcome else {
            Issue.record("saved under a lock another holder keeps: \(outcome)")
            return
        }
        #expect(reason.contains("cache.lock") && reason.contains("locked"), "\(reason)")
        #expect(waited >= FileCacheStore.lockWait - 0.5 && waited < FileCacheStore.lockWait + 10, "waited \(waited) s")
        #expect(!FileManager.default.fileExists(atPath: path))
        // Let go: the same store saves what it holds.
        close(holder)
        #expect(store.save() == .written(evicted: 0))
        let saved = try #require(FileCacheStore.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: path))), client: Self.client))
        #expect(saved["/a"] == entry(1))
    }

    @Test func pastItsBoundAKeepingStoreDropsUnusedEntriesFirst() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("cache")
        let big = { (i: Int) in FileCacheStore.Entry(status: FileStatus(size: 1, modifiedNanoseconds: 2, inode: UInt64(i)), sections: ["s": [UInt8](repeating: 7, count: 1000)]) }
        let seed = FileCacheStore(path: path, client: Self.client, retention: .keeping(maximumBytes: 1 << 20) { _ in true })
        for i in 0..<20 { seed.update("/t/\(100 + i)") { $0 = big(i) } }
        seed.save()
        // A bound of about ten entries: the run's own five stay, the oldest-named unused ones go first.
        let bounded = FileCacheStore(path: path, client: Self.client, retention: .keeping(maximumBytes: 10_500) { _ in true })
        for i in 15..<20 { bounded.markUsed("/t/\(100 + i)") }
        bounded.update("/t/200") { $0 = big(200) }
        guard case .written(let evicted) = bounded.save() else { Issue.record("not written"); return }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count <= 10_500 / 5 * 4)
        let kept = try #require(FileCacheStore.decodeAll(Array(bytes), client: Self.client))
        #expect(evicted == 21 - kept.count)
        for i in 15..<20 { #expect(kept["/t/\(100 + i)"] != nil) }
        #expect(kept["/t/200"] != nil && kept["/t/100"] == nil)
        // The unused survivors are the newest-named.
        let unused = kept.keys.filter { $0 < "/t/115" }.sorted()
        #expect(unused == (0..<unused.count).map { "/t/\(115 - unused.count + $0)" })
    }
}
