import APITraceFormat
import Foundation

/// Per-file bucket counts and failure groups of finished trace files, kept beside the state
/// (`<state>.counts`) so a cron run every minute decompresses only the files still being written.
///
/// A file is finished once its producer has started a later file: the writer never appends to
/// a file after that. An entry is used only while the file's ``FileStatus`` (size, modification
/// time, inode: a file replaced in place is a new file) is unchanged, as the report's summary
/// cache keys its entries, and only for a rule with the same scope, failure definition and bucket width
/// (counts) or the same route scope (a `new_failures` rule's ``FileFailureGroups``).
/// The format is a small private binary one; a damaged or foreign cache is ignored and rebuilt.
package final class FileCountCache: Sendable {
    /// Path of the cache file.
    package let path: String
    private let state: Locked<State>

    private struct State {
        var entries: [String: Entry] = [:]
        /// Files used by this run: only they are written back.
        var used: Set<String> = []
        var changed = false
        /// How many entries the last save wrote (nil: none yet).
        var written: Int?
    }

    struct Entry {
        var status: FileStatus
        var runs: [String: BucketRun] = [:]
        var groups: [String: FileFailureGroups] = [:]
    }

    /// Opens (reads) the cache at `path`; a missing or unreadable file is an empty cache.
    package init(path: String) {
        self.path = path
        // Never blocking on a FIFO or reading through a link planted at its name; a cache that
        // cannot be read is rebuilt.
        let bytes = (try? RegularFile.read(path, limit: Self.maximumBytes).get()) ?? nil
        let entries = bytes.flatMap { Self.decode(Data($0)) } ?? [:]
        state = Locked(State(entries: entries))
    }

    /// A cache that lives only as long as the object (a backtest's many evaluations); ``save()``
    /// writes nothing.
    package init() {
        path = ""
        state = Locked(State())
    }

    /// The cached counts of `file` for rule signatures, when the file is unchanged: per rule its
    /// run and, for a grouped rule (`grouped`), its runs by group counting key.
    func runs(for file: String, status: FileStatus, signatures: [String], grouped: [Bool]) -> (runs: [BucketRun], groups: [[String: BucketRun]])? {
        state.withLock { state in
            guard let entry = state.entries[file], entry.status == status else { return nil }
            var result: [BucketRun] = [], groups: [[String: BucketRun]] = []
            for (signature, isGrouped) in zip(signatures, grouped) {
                guard let run = entry.runs[signature] else { return nil }
                result.append(run)
                var byGroup: [String: BucketRun] = [:]
                if isGrouped {
                    let prefix = signature + Self.groupSeparator
                    for (key, run) in entry.runs where key.hasPrefix(prefix) { byGroup[String(key.dropFirst(prefix.count))] = run }
                }
                groups.append(byGroup)
            }
            state.used.insert(file)
            return (result, groups)
        }
    }

    /// Between a grouped rule's signature and a group's counting key in an entry's run names.
    static let groupSeparator = "\u{2}group\u{2}"

    func store(_ runs: [BucketRun], groups: [[String: BucketRun]], for file: String, status: FileStatus, signatures: [String]) {
        update(file, status: status) { entry in
            for (i, (signature, run)) in zip(signatures, runs).enumerated() {
                entry.runs[signature] = run
                let prefix = signature + Self.groupSeparator
                entry.runs = entry.runs.filter { !$0.key.hasPrefix(prefix) }
                for (key, run) in i < groups.count ? groups[i] : [:] { entry.runs[prefix + key] = run }
            }
        }
    }

    /// The cached failure groups of `file` for a `new_failures` signature, when the file is unchanged.
    func failureGroups(for file: String, status: FileStatus, signature: String) -> FileFailureGroups? {
        state.withLock { state in
            guard let entry = state.entries[file], entry.status == status,
                  let groups = entry.groups[signature] else { return nil }
            state.used.insert(file)
            return groups
        }
    }

    func store(_ groups: FileFailureGroups, for file: String, status: FileStatus, signature: String) {
        update(file, status: status) { $0.groups[signature] = groups }
    }

    /// Changes the entry of `file`, starting afresh when the file changed since it was stored.
    /// Nothing is stored when the file changed while it was read (its status differs from `status`).
    private func update(_ file: String, status: FileStatus, _ change: (inout Entry) -> Void) {
        guard FileStatus(path: file) == status else { return }
        state.withLock { state in
            var entry = state.entries[file].flatMap { $0.status == status ? $0 : nil } ?? Entry(status: status)
            change(&entry)
            state.entries[file] = entry
            state.used.insert(file)
            state.changed = true
        }
    }

    /// Writes the cache (temporary file + rename), keeping only files used by this run. Can be
    /// called more than once in a run (after counting, after `new_failures` rules): entries
    /// not used yet stay in memory until the run ends.
    package func save() {
        guard !path.isEmpty else { return }
        state.withLock { state in
            guard state.changed || state.used.count != (state.written ?? state.entries.count) else { return }
            let kept = state.entries.filter { state.used.contains($0.key) }
            // A cache that cannot be written (a full disk) is only slower next time.
            try? AtomicFileWriter.write(Self.encode(kept), to: path)
            state.changed = false
            state.written = kept.count
        }
    }

    /// The largest cache file read; a larger one is rebuilt.
    static let maximumBytes = 256 << 20

    private static let magic: UInt32 = 0x4154_4333  // "ATC3"

    static func encode(_ entries: [String: Entry]) -> Data {
        var out = Data()
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        func put(_ s: String) { let b = Array(s.utf8); put(UInt32(b.count)); out.append(contentsOf: b) }
        put(magic)
        put(UInt32(entries.count))
        for (file, entry) in entries {
            put(file); put(entry.status.size); put(entry.status.modifiedNanoseconds); put(entry.status.inode); put(UInt32(entry.runs.count))
            for (signature, run) in entry.runs {
                put(signature); put(run.first); put(UInt32(run.requests.count))
                for i in run.requests.indices { put(run.requests[i].bitPattern); put(run.failures[i].bitPattern) }
            }
            put(UInt32(entry.groups.count))
            for (signature, summary) in entry.groups {
                put(signature); put(summary.appVersion); put(summary.first); put(summary.last); put(UInt32(summary.groups.count))
                for g in summary.groups {
                    put(g.key); put(UInt8(g.isDecodeFailure ? 1 : 0)); put(g.count); put(g.last)
                }
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
            // Counts read from the file are checked against the bytes left before anything is reserved.
            func count(_ minimumBytesEach: Int) -> Int? {
                guard let n = get(UInt32.self), Int(n) <= (raw.count - at) / minimumBytesEach else { return nil }
                return Int(n)
            }
            guard get(UInt32.self) == magic, let entryCount = count(36) else { return nil }
            var entries: [String: Entry] = [:]
            for _ in 0..<entryCount {
                guard let file = string(), let size = get(Int64.self), let modified = get(Int64.self), let inode = get(UInt64.self),
                      let runCount = count(16) else { return nil }
                var entry = Entry(status: FileStatus(size: size, modifiedNanoseconds: modified, inode: inode))
                for _ in 0..<runCount {
                    guard let signature = string(), let first = get(Int64.self), let n = count(16) else { return nil }
                    var run = BucketRun()
                    run.first = first
                    run.requests.reserveCapacity(n); run.failures.reserveCapacity(n)
                    for _ in 0..<n {
                        let requests = Double(bitPattern: get(UInt64.self)!), failures = Double(bitPattern: get(UInt64.self)!)
                        // Counts are finite and not negative; anything else is a damaged or forged cache.
                        guard requests.isFinite, failures.isFinite, requests >= 0, failures >= 0 else { return nil }
                        run.requests.append(requests)
                        run.failures.append(failures)
                    }
                    entry.runs[signature] = run
                }
                guard let summaryCount = count(28) else { return nil }
                for _ in 0..<summaryCount {
                    guard let signature = string(), let version = string(), let first = get(Int64.self), let last = get(Int64.self),
                          let n = count(21) else { return nil }
                    var summary = FileFailureGroups(appVersion: version, first: first, last: last)
                    summary.groups.reserveCapacity(n)
                    for _ in 0..<n {
                        guard let key = string(), let flag = get(UInt8.self), let events = get(Int64.self), events > 0,
                              let last = get(Int64.self) else { return nil }
                        summary.groups.append(.init(key: key, isDecodeFailure: flag == 1, count: events, last: last))
                    }
                    entry.groups[signature] = summary
                }
                entries[file] = entry
            }
            return entries
        }
    }
}
