import APITraceFormat
import Foundation

/// Per-file bucket counts and failure groups of trace files, kept beside the state
/// (`<state>.counts`) so a cron run every minute decompresses only what was written since the last.
///
/// A client of the one per-file cache store (``FileCacheStore``). A finished file's entry is used
/// only while its ``FileStatus`` (size, modification time, inode: a file replaced in place is a new
/// file) is unchanged, as the report's summary cache keys its entries. A collector's open file,
/// which grows by appended gzip members, keeps the counts up to its last complete member with an
/// ``AppendedPrefix``: the next run inflates only the members appended since, and a file cut back
/// or rewritten under its name is counted again in full. Counts serve a rule with the same scope,
/// failure definition and bucket width (runs) or the same route scope (a `new_failures` rule's
/// ``FileFailureGroups``). A damaged or foreign cache is ignored (``problem``) and rebuilt.
package final class FileCountCache: Sendable {
    /// Path of the cache file.
    package let path: String
    let store: FileCacheStore

    /// The client name and version of the entries in the store.
    static let client = "alert-counts 2"

    /// Opens (reads) the cache at `path`; a missing file is an empty cache, an unreadable or
    /// damaged one too (see ``problem``).
    package init(path: String) {
        self.path = path
        store = FileCacheStore(path: path, client: Self.client)
    }

    /// A cache that lives only as long as the object (a backtest's many evaluations); ``save()``
    /// writes nothing.
    package init() {
        path = ""
        store = FileCacheStore(client: Self.client)
    }

    /// Why the cache file was not used (damaged, of another version, unreadable), naming it; nil when it was.
    package var problem: String? { store.problem }

    /// Writes the cache (temporary file + rename), keeping only files used by this run. Can be
    /// called more than once in a run (after counting, after `new_failures` rules).
    package func save() { store.save() }

    // MARK: - Finished files

    /// The cached counts of `file` for rule signatures, when the file is unchanged: per rule its
    /// run and, for a grouped rule (`grouped`), its runs by group counting key.
    func runs(for file: String, status: FileStatus, signatures: [String], grouped: [Bool]) -> (runs: [BucketRun], groups: [[String: BucketRun]])? {
        guard let entry = store.entry(file), entry.status == status, entry.prefix == nil,
              let found = Self.runs(in: entry.sections, signatures: signatures, grouped: grouped) else { return nil }
        store.markUsed(file)
        return found
    }

    /// True when the cache has an entry for `file` as it is now with a run for every signature:
    /// ``runs(for:status:signatures:grouped:)`` will most likely serve it (it still checks the runs).
    func holdsRuns(for file: String, status: FileStatus, signatures: [String]) -> Bool {
        guard let entry = store.entry(file), entry.status == status, entry.prefix == nil else { return false }
        return signatures.allSatisfy { entry.sections[Self.runsSection + $0] != nil }
    }

    func store(_ runs: [BucketRun], groups: [[String: BucketRun]], for file: String, status: FileStatus, signatures: [String]) {
        update(file, status: status, prefix: nil) { Self.put(runs, groups: groups, signatures: signatures, into: &$0) }
    }

    /// The cached failure groups of `file` for a `new_failures` signature, when the file is unchanged.
    func failureGroups(for file: String, status: FileStatus, signature: String) -> FileFailureGroups? {
        guard let entry = store.entry(file), entry.status == status, entry.prefix == nil,
              let bytes = entry.sections[Self.groupsSection + signature],
              let groups = Self.decodeGroups(bytes) else { return nil }
        store.markUsed(file)
        return groups
    }

    func store(_ groups: FileFailureGroups, for file: String, status: FileStatus, signature: String) {
        update(file, status: status, prefix: nil) { $0[Self.groupsSection + signature] = Self.encode(groups) }
    }

    // MARK: - Appended (open) files

    /// What the cache holds of a file that grows by appended members: counts up to ``prefix``,
    /// and the header context (``context(of:)``) of the file's first member.
    struct AppendedCounts {
        var runs: [BucketRun]
        var groups: [[String: BucketRun]]
        var prefix: AppendedPrefix
        var context: [UInt8]
    }

    /// The cached counts of the prefix of `file`, when its bytes up to the prefix are unchanged
    /// (same inode, the fingerprints of ``AppendedPrefix`` match).
    func appended(for file: String, status: FileStatus, signatures: [String], grouped: [Bool]) -> AppendedCounts? {
        guard let entry = store.entry(file), let prefix = entry.prefix, entry.status.inode == status.inode,
              prefix.offset <= status.size, AppendedPrefix(path: file, offset: prefix.offset) == prefix,
              let context = entry.sections[Self.contextSection],
              let found = Self.runs(in: entry.sections, signatures: signatures, grouped: grouped) else { return nil }
        store.markUsed(file)
        return AppendedCounts(runs: found.runs, groups: found.groups, prefix: prefix, context: context)
    }

    func storeAppended(_ runs: [BucketRun], groups: [[String: BucketRun]], for file: String, status: FileStatus, prefix: AppendedPrefix,
                       context: [UInt8], signatures: [String]) {
        store.update(file) { entry in
            var sections: [String: [UInt8]] = [Self.contextSection: context]
            Self.put(runs, groups: groups, signatures: signatures, into: &sections)
            entry = FileCacheStore.Entry(status: status, prefix: prefix, sections: sections)
        }
    }

    /// The header fields every member of an appended file must share for its counts to add up
    /// (``TraceFileReader/RecordLines`` takes a repeated header of the same context as a member boundary).
    static func context(of header: TraceFileHeader) -> [UInt8] {
        var writer = BinaryWriter(capacity: 64)
        writer.put(header.producer)
        writer.put(header.app)
        writer.put(header.appVersion)
        writer.put(header.host)
        return writer.bytes
    }

    // MARK: - Sections

    private static let runsSection = "runs\u{1}"
    private static let groupsSection = "groups\u{1}"
    private static let contextSection = "context"
    /// Between a grouped rule's signature and a group's counting key in an entry's run names.
    static let groupSeparator = "\u{2}group\u{2}"

    /// Changes the sections of `file`, starting afresh when the file changed since they were stored.
    /// Nothing is stored when the file changed while it was read (its status differs from `status`).
    private func update(_ file: String, status: FileStatus, prefix: AppendedPrefix?, _ change: (inout [String: [UInt8]]) -> Void) {
        guard FileStatus(path: file) == status else { return }
        store.update(file) { entry in
            var sections = entry.flatMap { $0.status == status && $0.prefix == prefix ? $0.sections : nil } ?? [:]
            change(&sections)
            entry = FileCacheStore.Entry(status: status, prefix: prefix, sections: sections)
        }
    }

    private static func put(_ runs: [BucketRun], groups: [[String: BucketRun]], signatures: [String], into sections: inout [String: [UInt8]]) {
        for (i, (signature, run)) in zip(signatures, runs).enumerated() {
            let name = runsSection + signature
            sections[name] = encode(run)
            let prefix = name + groupSeparator
            for key in sections.keys where key.hasPrefix(prefix) { sections[key] = nil }
            for (key, run) in i < groups.count ? groups[i] : [:] { sections[prefix + key] = encode(run) }
        }
    }

    private static func runs(in sections: [String: [UInt8]], signatures: [String], grouped: [Bool]) -> (runs: [BucketRun], groups: [[String: BucketRun]])? {
        var result: [BucketRun] = [], groups: [[String: BucketRun]] = []
        for (signature, isGrouped) in zip(signatures, grouped) {
            let name = runsSection + signature
            guard let bytes = sections[name], let run = decodeRun(bytes) else { return nil }
            result.append(run)
            var byGroup: [String: BucketRun] = [:]
            if isGrouped {
                let prefix = name + groupSeparator
                for (key, bytes) in sections where key.hasPrefix(prefix) {
                    guard let run = decodeRun(bytes) else { return nil }
                    byGroup[String(key.dropFirst(prefix.count))] = run
                }
            }
            groups.append(byGroup)
        }
        return (result, groups)
    }

    // MARK: - Encoding

    /// A run: its first bucket, then each bucket's requests and failures, a whole number as a
    /// varint of twice itself (most counts take a byte), any other as the marker 1 and its 8 bytes.
    static func encode(_ run: BucketRun) -> [UInt8] {
        var writer = BinaryWriter(capacity: 16 + 4 * run.requests.count)
        writer.put(run.first)
        writer.put(run.requests.count)
        func amount(_ value: Double) {
            if value >= 0, value < 0x1p52, value.rounded(.towardZero) == value {
                writer.put(Int(value) << 1)
            } else {
                writer.put(1)
                writer.put(value)
            }
        }
        for i in run.requests.indices {
            amount(run.requests[i])
            amount(run.failures[i])
        }
        return writer.bytes
    }

    static func decodeRun(_ bytes: [UInt8]) -> BucketRun? {
        bytes.withUnsafeBytes { raw -> BucketRun? in
            var reader = BinaryReader(raw)
            func amount() throws(BinaryReader.Invalid) -> Double {
                let tag = try reader.varint()
                if tag & 1 == 0 { return Double(tag >> 1) }
                guard tag == 1 else { throw BinaryReader.Invalid() }
                // Counts are finite and not negative; anything else is a damaged or forged cache.
                return try reader.amount()
            }
            do throws(BinaryReader.Invalid) {
                var run = BucketRun()
                run.first = try reader.get(Int64.self)
                let n = try reader.count()
                // Each bucket takes two bytes at least: a hostile count reserves nothing.
                guard n <= reader.remaining / 2 else { return nil }
                run.requests.reserveCapacity(n)
                run.failures.reserveCapacity(n)
                for _ in 0..<n {
                    run.requests.append(try amount())
                    run.failures.append(try amount())
                }
                guard reader.remaining == 0 else { return nil }
                return run
            } catch {
                return nil
            }
        }
    }

    static func encode(_ summary: FileFailureGroups) -> [UInt8] {
        var writer = BinaryWriter(capacity: 64 + 32 * summary.groups.count)
        writer.put(summary.appVersion)
        writer.put(summary.first)
        writer.put(summary.last)
        writer.putCount(summary.groups.count)
        for g in summary.groups {
            writer.put(g.key)
            writer.put(g.isDecodeFailure)
            writer.put(g.count)
            writer.put(g.last)
        }
        return writer.bytes
    }

    static func decodeGroups(_ bytes: [UInt8]) -> FileFailureGroups? {
        bytes.withUnsafeBytes { raw -> FileFailureGroups? in
            var reader = BinaryReader(raw)
            do throws(BinaryReader.Invalid) {
                var summary = FileFailureGroups(appVersion: try reader.string(), first: try reader.get(Int64.self), last: try reader.get(Int64.self))
                let n = try reader.items(minimumSize: 21)
                summary.groups.reserveCapacity(n)
                for _ in 0..<n {
                    let key = try reader.string(), flag = try reader.bool(), count = try reader.get(Int64.self), last = try reader.get(Int64.self)
                    guard count > 0 else { return nil }
                    summary.groups.append(.init(key: key, isDecodeFailure: flag, count: count, last: last))
                }
                guard reader.remaining == 0 else { return nil }
                return summary
            } catch {
                return nil
            }
        }
    }

    // MARK: - Whole files (tests, tools)

    /// A finished file's entry, decoded whole.
    struct Entry {
        var status: FileStatus
        var runs: [String: BucketRun] = [:]
        var groups: [String: FileFailureGroups] = [:]
    }

    /// The bytes of a cache file holding `entries` (finished files).
    static func encode(_ entries: [String: Entry]) -> Data {
        var stored: [String: FileCacheStore.Entry] = [:]
        for (file, entry) in entries {
            var sections: [String: [UInt8]] = [:]
            for (signature, run) in entry.runs { sections[runsSection + signature] = encode(run) }
            for (signature, groups) in entry.groups { sections[groupsSection + signature] = encode(groups) }
            stored[file] = FileCacheStore.Entry(status: entry.status, sections: sections)
        }
        return Data(FileCacheStore.encodeAll(stored, client: client))
    }

    /// Every entry of a cache file's bytes; nil when anything in them is damaged.
    static func decode(_ data: Data) -> [String: Entry]? {
        guard let stored = FileCacheStore.decodeAll(Array(data), client: client) else { return nil }
        var entries: [String: Entry] = [:]
        for (file, entry) in stored {
            var out = Entry(status: entry.status)
            for (name, bytes) in entry.sections {
                if name.hasPrefix(runsSection) {
                    guard let run = decodeRun(bytes) else { return nil }
                    out.runs[String(name.dropFirst(runsSection.count))] = run
                } else if name.hasPrefix(groupsSection) {
                    guard let groups = decodeGroups(bytes) else { return nil }
                    out.groups[String(name.dropFirst(groupsSection.count))] = groups
                }
            }
            entries[file] = out
        }
        return entries
    }
}
