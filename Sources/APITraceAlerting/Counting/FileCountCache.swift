import Foundation

/// Per-file bucket counts of finished trace files, kept beside the state (`<state>.counts`) so a
/// cron run every minute decompresses only the files still being written.
///
/// A file is finished once its producer has started a later file: the writer never appends to
/// a file after that. An entry is used only while the file's size and modification time are
/// unchanged, and only for a rule with the same scope, failure definition and bucket width.
/// The format is a small private binary one; a damaged or foreign cache is ignored and rebuilt.
public final class FileCountCache: @unchecked Sendable {
    /// Path of the cache file.
    public let path: String
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var used: Set<String> = []
    private var changed = false

    struct Entry {
        var size: Int64
        var modified: Int64
        var runs: [String: BucketRun]
    }

    /// Opens (reads) the cache at `path`; a missing or unreadable file is an empty cache.
    public init(path: String) {
        self.path = path
        if let data = FileManager.default.contents(atPath: path) { entries = Self.decode(data) ?? [:] }
    }

    /// The cached counts of `file` for a rule signature, when the file is unchanged.
    func runs(for file: String, size: Int64, modified: Int64, signatures: [String]) -> [BucketRun]? {
        lock.lock(); defer { lock.unlock() }
        guard let entry = entries[file], entry.size == size, entry.modified == modified else { return nil }
        var result: [BucketRun] = []
        for signature in signatures {
            guard let run = entry.runs[signature] else { return nil }
            result.append(run)
        }
        used.insert(file)
        return result
    }

    func store(_ runs: [BucketRun], for file: String, size: Int64, modified: Int64, signatures: [String]) {
        lock.lock(); defer { lock.unlock() }
        entries[file] = Entry(size: size, modified: modified, runs: Dictionary(zip(signatures, runs)) { a, _ in a })
        used.insert(file)
        changed = true
    }

    /// Writes the cache (temporary file + rename), keeping only files used by this run.
    public func save() {
        lock.lock(); defer { lock.unlock() }
        guard changed || used.count != entries.count else { return }
        entries = entries.filter { used.contains($0.key) }
        let directory = (path as NSString).deletingLastPathComponent
        let url = URL(fileURLWithPath: (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp")
        do {
            try Self.encode(entries).write(to: url)
            if rename(url.path, path) != 0 { try? FileManager.default.removeItem(at: url) }
        } catch {
            try? FileManager.default.removeItem(at: url)
        }
    }

    private static let magic: UInt32 = 0x4154_4331  // "ATC1"

    static func encode(_ entries: [String: Entry]) -> Data {
        var out = Data()
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        func put(_ d: Double) { put(d.bitPattern) }
        func put(_ s: String) { let b = Array(s.utf8); put(UInt32(b.count)); out.append(contentsOf: b) }
        put(magic)
        put(UInt32(entries.count))
        for (file, entry) in entries {
            put(file); put(entry.size); put(entry.modified); put(UInt32(entry.runs.count))
            for (signature, run) in entry.runs {
                put(signature); put(run.first); put(UInt32(run.requests.count))
                for i in run.requests.indices { put(run.requests[i]); put(run.failures[i]) }
            }
        }
        return out
    }

    static func decode(_ data: Data) -> [String: Entry]? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [String: Entry]? in
            var at = 0
            func get<T: FixedWidthInteger>(_: T.Type) -> T? {
                guard at + MemoryLayout<T>.size <= raw.count else { return nil }
                defer { at += MemoryLayout<T>.size }
                return T(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: T.self))
            }
            func string() -> String? {
                guard let n = get(UInt32.self), at + Int(n) <= raw.count else { return nil }
                defer { at += Int(n) }
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<(at + Int(n))]), as: UTF8.self)
            }
            guard get(UInt32.self) == magic, let count = get(UInt32.self) else { return nil }
            var entries: [String: Entry] = [:]
            for _ in 0..<count {
                guard let file = string(), let size = get(Int64.self), let modified = get(Int64.self), let runCount = get(UInt32.self) else { return nil }
                var runs: [String: BucketRun] = [:]
                for _ in 0..<runCount {
                    guard let signature = string(), let first = get(Int64.self), let n = get(UInt32.self), at + Int(n) * 16 <= raw.count else { return nil }
                    var run = BucketRun()
                    run.first = first
                    run.requests.reserveCapacity(Int(n)); run.failures.reserveCapacity(Int(n))
                    for _ in 0..<n {
                        run.requests.append(Double(bitPattern: get(UInt64.self)!))
                        run.failures.append(Double(bitPattern: get(UInt64.self)!))
                    }
                    runs[signature] = run
                }
                entries[file] = Entry(size: size, modified: modified, runs: runs)
            }
            return entries
        }
    }
}
