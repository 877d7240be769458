import APITraceFormat
import Foundation

/// Per-file summaries kept between `apitrace report` runs, so a folder re-read every few minutes
/// only decompresses the files that arrived or changed since.
///
/// A client of the one per-file cache store (``FileCacheStore``, the file `report.cache` in
/// ``directory``), as the alert's count cache is. Each file's entry is keyed by its absolute path
/// and its status (size, modification time in nanoseconds, inode), and holds, per time-series
/// granularity, one section: the file's whole ``TraceSummary`` (warnings included) read without
/// filters. An entry is served only while the file's path and status match what was recorded, and
/// only for the same granularity; anything else is a miss and the file is read again. Only
/// finished files are stored (``TraceFileSelection/SelectedFile/isCacheable``: the writer has
/// started a later file, so it will not append to this one).
///
/// The store also keeps one merged summary: the merge of the whole-file summaries of the last
/// unfiltered run, with the files (and statuses) it covers. A later unfiltered run in which every
/// one of those files is present and unchanged decodes that one summary instead of thousands of
/// entries. Every section is versioned and checksummed, and decoded as hostile input (bounded
/// counts, no allocation past the section's size, itself at most ``maximumEntryBytes``): a
/// damaged, truncated or foreign store or section is a miss with a warning naming the cache
/// (``problems``), never a crash. The store is read once, and written once at ``finish()`` when the
/// run stored something, under a lock, taking the entries another report saved meanwhile, so two
/// reports running at once both keep theirs. When the folder cannot be created or written (a
/// read-only disk, another user's folder) the cache only reads. Entries of files that no longer
/// exist are dropped, and past ``maximumBytes`` the entries this run did not use go first.
///
/// ```swift
/// let cache = TraceSummaryCache(directory: TraceSummaryCache.defaultDirectory)
/// let summary = TraceSummarizer(cache: cache).summarize(paths: ["traces"])
/// ```
public final class TraceSummaryCache: Sendable {
    /// The folder holding the cache file.
    public let directory: String
    /// Most bytes of the cache file; past it the entries this run did not use are dropped first.
    public let maximumBytes: Int64
    /// The default bound: 256 MB (a week of a busy fleet's files at a few tens of KB each).
    public static let defaultMaximumBytes: Int64 = 256 << 20
    /// Largest entry read or written (larger summaries are not cached).
    public static let maximumEntryBytes = 16 << 20

    /// What a run did with the cache.
    public struct Statistics: Sendable, Equatable {
        /// Files whose summary came from the cache.
        public var hits = 0
        /// Of the hits, files served through the merged summary, without reading their entries.
        public var mergedHits = 0
        /// Cacheable files read because no valid entry matched them.
        public var misses = 0
        /// Entries written.
        public var stored = 0
        /// Entries dropped to stay within ``TraceSummaryCache/maximumBytes``.
        public var evicted = 0
        /// True when entries could not be written (the cache only read).
        public var readOnly = false
    }

    /// The one store file.
    let store: FileCacheStore
    /// False when ``directory`` was no folder at start (not made yet, or under a file): the store's
    /// "cannot read" is then no news.
    private let folderExisted: Bool
    private let state = Locked(State())

    private struct State {
        var stats = Statistics()
        /// The merged summary used by this run: the files it covers.
        var mergedUsed: [String: FileStatus]?
        var problems: [String] = []
    }

    /// The store's client name and version: bump the version whenever the sections' encoding changes.
    static let client = "report-summaries 4"
    /// Name of the store file in ``directory``.
    public static let fileName = "report.cache"
    /// The key of the merged summary's entry: no file's absolute path starts with a NUL.
    static let mergedKey = "\u{0}merged"

    /// Creates a cache in `directory` (created on the first write) and reads its file.
    public init(directory: String, maximumBytes: Int64 = TraceSummaryCache.defaultMaximumBytes) {
        let bound = min(max(0, maximumBytes), Int64(FileCacheStore.maximumBytes))
        self.directory = directory
        self.maximumBytes = bound
        var isFolder: ObjCBool = false
        folderExisted = FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder) && isFolder.boolValue
        store = FileCacheStore(path: directory + "/" + TraceSummaryCache.fileName, client: TraceSummaryCache.client,
                               retention: .keeping(maximumBytes: Int(bound)) { file in
            // Entries of other folders' files stay, and the merged summary (a filtered run does not
            // use it); entries of files that are gone do not.
            file == TraceSummaryCache.mergedKey || FileStatus(path: file) != nil
        })
    }

    /// The environment variable that overrides ``defaultDirectory``.
    public static let environmentVariable = "APITRACE_CACHE_DIR"

    /// `$APITRACE_CACHE_DIR` when set; otherwise `Library/Caches/apitrace/report` on Apple
    /// platforms and `$XDG_CACHE_HOME/apitrace/report` (`~/.cache/apitrace/report`) elsewhere.
    ///
    /// A cache folder of the user's rather than one beside the traces: trace folders are often
    /// read-only to the person reporting (a collector's, a copied archive), and writing into them
    /// would put foreign files in front of tools that sync or upload them.
    public static var defaultDirectory: String {
        let env = ProcessInfo.processInfo.environment
        if let dir = env[environmentVariable], !dir.isEmpty { return dir }
        #if canImport(Darwin)
        if let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first {
            return caches.appendingPathComponent("apitrace/report").path
        }
        #endif
        if let cache = env["XDG_CACHE_HOME"], !cache.isEmpty { return cache + "/apitrace/report" }
        return NSHomeDirectory() + "/.cache/apitrace/report"
    }

    /// What this run did so far.
    public var statistics: Statistics {
        state.withLock { $0.stats }
    }

    /// Warnings about the cache itself, each naming its file: a damaged, foreign or unreadable
    /// store, damaged sections (ignored: the files are read again; the first ten are listed).
    package var problems: [String] {
        let own = state.withLock { $0.problems }
        return (folderExisted ? store.problem.map { [$0] } ?? [] : []) + own
    }

    private func problem(_ text: String) {
        state.withLock { state in
            if state.problems.count < 10, !state.problems.contains(text) { state.problems.append(text) }
        }
    }

    // MARK: - Entries

    /// A cached whole-file summary.
    struct Entry {
        /// The summary of the whole file, read without filters.
        var summary: TraceSummary
        /// The file's header `app_version`, when it had a header (`nil` inside when the header has none).
        var header: String??

        /// Warnings stored naming the file by one path name it by the other (a cache keeps absolute
        /// paths; a report names files as the user gave them).
        mutating func renameWarnings(from old: String, to new: String) {
            guard old != new else { return }
            summary.warnings = summary.warnings.map {
                TraceReadWarning(path: $0.path == old ? new : $0.path, kind: $0.kind, eventsKept: $0.eventsKept)
            }
        }
    }

    /// The section holding a file's summary at `granularity`.
    static func section(granularity: Int64) -> String { "summary \(granularity)" }

    /// The entry for a file whose absolute path is `absolutePath`, when one matches its status and
    /// the granularity; its warnings name the file as `path` (the spelling of this run).
    func entry(absolutePath: String, path: String, status: FileStatus, granularity: Int64) -> Entry? {
        var found: Entry?
        if let stored = store.entry(absolutePath), stored.status == status, stored.prefix == nil,
           let bytes = stored.sections[Self.section(granularity: granularity)] {
            found = Self.decode(bytes, absolutePath: absolutePath, status: status, granularity: granularity)
            if found == nil {
                problem("ignoring a damaged entry of the cache \(FileSystemPath.display(store.path)) (for \(FileSystemPath.display(absolutePath))); the file is read again")
            } else {
                store.markUsed(absolutePath)
            }
        }
        state.withLock { state in
            if found == nil {
                state.stats.misses += 1
            } else {
                state.stats.hits += 1
            }
        }
        guard var entry = found else { return nil }
        entry.renameWarnings(from: absolutePath, to: path)
        return entry
    }

    /// Stores the whole-file summary of a file (warnings naming it by `path` are stored by its
    /// absolute path); true when it was stored. The store file is written at ``finish()``.
    @discardableResult
    func store(_ entry: Entry, absolutePath: String, path: String, status: FileStatus, granularity: Int64) -> Bool {
        var entry = entry
        entry.renameWarnings(from: path, to: absolutePath)
        let bytes = Self.encode(entry, absolutePath: absolutePath, status: status, granularity: granularity)
        guard bytes.count <= Self.maximumEntryBytes, !state.withLock({ $0.stats.readOnly }) else { return false }
        let name = Self.section(granularity: granularity)
        store.update(absolutePath) { stored in
            // Sections of other granularities stay while they were stored for the same status.
            var sections = stored.flatMap { $0.status == status && $0.prefix == nil ? $0.sections : nil } ?? [:]
            sections[name] = bytes
            stored = FileCacheStore.Entry(status: status, sections: sections)
        }
        state.withLock { $0.stats.stored += 1 }
        return true
    }

    /// Ends the run: writes the store when this run stored entries or a new merged summary
    /// (creating ``directory``). Does nothing after a run that changed nothing.
    public func finish() { finish(merged: nil, covered: [:], granularity: 0) }

    /// ``finish()``, keeping `merged` for later runs: the merge of the merged summary this run used
    /// (if any) and of exactly the whole-file summaries of `covered` (taken from entries or stored;
    /// by absolute path, with the status each was stored for), warnings naming files by their
    /// absolute paths. It replaces the store's merged summary unless that one still holds (all
    /// its files unchanged) and covers more files: a `--since 2h` run does not displace the week's.
    func finish(merged: TraceSummary?, covered: [String: FileStatus], granularity: Int64) {
        let used = state.withLock { $0.mergedUsed }
        var changed = state.withLock { $0.stats.stored > 0 } || store.problem != nil
        if let merged, !covered.isEmpty {
            var all = used ?? [:]
            // A file both covered by the merged summary used and read whole would count twice.
            let overlaps = covered.keys.contains { all[$0] != nil }
            all.merge(covered) { a, _ in a }
            if !overlaps, used != nil || !Self.displaces(current: store.entry(Self.mergedKey), count: all.count) {
                let bytes = Self.encodeMerged(merged, granularity: granularity, covered: all)
                if bytes.count <= Self.maximumEntryBytes {
                    store.update(Self.mergedKey) { $0 = FileCacheStore.Entry(status: FileStatus(size: 0, modifiedNanoseconds: 0, inode: 0), sections: [Self.mergedSection: bytes]) }
                    changed = true
                }
            }
        }
        if used != nil { store.markUsed(Self.mergedKey) }
        guard changed else { return }
        let made = (try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
        let outcome = made ? store.save() : .failed("cannot create the folder \(FileSystemPath.display(directory))")
        switch outcome {
        case .unchanged: break
        case .written(let evicted):
            state.withLock { $0.stats.evicted += evicted }
            Self.removeLegacyFiles(in: directory)
        case .failed:
            // A folder that cannot be written (a shared archive, another user's cache) is expected: the cache only reads.
            state.withLock { $0.stats.readOnly = true }
        }
    }

    /// True when the store's merged summary covers more than `count` files and still holds (every
    /// file it covers is there, unchanged): a merge of fewer files must not replace it.
    private static func displaces(current: FileCacheStore.Entry?, count: Int) -> Bool {
        guard let bytes = current?.sections[mergedSection], let covered = mergedCoverage(bytes), covered.count > count else { return false }
        return covered.allSatisfy { FileStatus(path: $0.key) == $0.value }
    }

    static let mergedSection = "merged"

    // MARK: - Open files

    /// The summary of a collector's open file (``TraceFileIdentity/Kind/open``) up to `length` (its
    /// journal's committed length, or its size), when the store holds one read up to exactly there
    /// and the bytes before are unchanged: the same inode and ``AppendedPrefix`` fingerprints, as
    /// the alert's count cache knows such a file. A file that grew, was cut back or was rewritten
    /// is read again.
    func openEntry(absolutePath: String, path: String, status: FileStatus, length: Int64, granularity: Int64) -> Entry? {
        var found: Entry?
        if let stored = store.entry(absolutePath), let prefix = stored.prefix, prefix.offset == length,
           stored.status.inode == status.inode, let bytes = stored.sections[Self.section(granularity: granularity)],
           AppendedPrefix(path: path, offset: length) == prefix {
            found = Self.decode(bytes, absolutePath: absolutePath, status: Self.openKey(length: length, inode: status.inode), granularity: granularity)
            if found == nil {
                problem("ignoring a damaged entry of the cache \(FileSystemPath.display(store.path)) (for \(FileSystemPath.display(absolutePath))); the file is read again")
            } else {
                store.markUsed(absolutePath)
            }
        }
        state.withLock { found == nil ? ($0.stats.misses += 1) : ($0.stats.hits += 1) }
        guard var entry = found else { return nil }
        entry.renameWarnings(from: absolutePath, to: path)
        return entry
    }

    /// Stores the summary of an open file read up to `prefix` (``openEntry(absolutePath:path:status:length:granularity:)``).
    @discardableResult
    func storeOpen(_ entry: Entry, absolutePath: String, path: String, status: FileStatus, prefix: AppendedPrefix, granularity: Int64) -> Bool {
        var entry = entry
        entry.renameWarnings(from: path, to: absolutePath)
        let bytes = Self.encode(entry, absolutePath: absolutePath, status: Self.openKey(length: prefix.offset, inode: status.inode), granularity: granularity)
        guard bytes.count <= Self.maximumEntryBytes, !state.withLock({ $0.stats.readOnly }) else { return false }
        let name = Self.section(granularity: granularity)
        store.update(absolutePath) { stored in
            var sections = stored.flatMap { $0.status.inode == status.inode && $0.prefix == prefix ? $0.sections : nil } ?? [:]
            sections[name] = bytes
            stored = FileCacheStore.Entry(status: status, prefix: prefix, sections: sections)
        }
        state.withLock { $0.stats.stored += 1 }
        return true
    }

    /// The status an open file's section is stored under: the length read and the inode.
    private static func openKey(length: Int64, inode: UInt64) -> FileStatus {
        FileStatus(size: length, modifiedNanoseconds: 0, inode: inode)
    }

    /// True when the store holds a merged summary (so ``mergedSummaries(of:granularity:)`` may find one).
    var hasMergedSummaries: Bool { store.entry(Self.mergedKey) != nil }

    /// A file of this run, for ``mergedSummaries(of:granularity:)``.
    struct RunFile {
        var path: String
        var absolutePath: String
        var status: FileStatus
    }

    /// The merged summary, when every file it covers is a file of this run, unchanged, it was
    /// stored for this granularity, and `accepts` its first and last event times (a time range
    /// holding them holds every event of every file it covers): it replaces reading and merging
    /// those files one by one. Returns the summaries (none or one; warnings naming files as this
    /// run spells them) and the paths they cover.
    func mergedSummaries(of files: [RunFile], granularity: Int64,
                         accepts: (TraceTimestamp?, TraceTimestamp?) -> Bool = { _, _ in true }) -> (summaries: [TraceSummary], covered: Set<String>) {
        guard let stored = store.entry(Self.mergedKey), let bytes = stored.sections[Self.mergedSection] else { return ([], []) }
        let damaged = "ignoring the damaged merged summary of the cache \(FileSystemPath.display(store.path)); its files are read from their entries"
        // The files first (cheap), the summary only when they are all here and unchanged.
        guard let coverage = Self.mergedCoverage(bytes) else {
            problem(damaged)
            return ([], [])
        }
        var byPath: [String: RunFile] = [:]
        var duplicated = false
        for file in files where byPath.updateValue(file, forKey: file.absolutePath) != nil { duplicated = true }
        guard !duplicated, coverage.allSatisfy({ byPath[$0.key]?.status == $0.value }) else { return ([], []) }
        guard let merged = Self.decodeMerged(bytes) else {
            problem(damaged)
            return ([], [])
        }
        guard merged.granularity == granularity, accepts(merged.summary.firstEvent, merged.summary.lastEvent) else { return ([], []) }
        var summary = merged.summary
        summary.warnings = summary.warnings.map {
            TraceReadWarning(path: byPath[$0.path]?.path ?? $0.path, kind: $0.kind, eventsKept: $0.eventsKept)
        }
        let covered = Set(merged.covered.keys.map { byPath[$0]!.path })
        state.withLock { state in
            state.mergedUsed = merged.covered
            state.stats.hits += covered.count
            state.stats.mergedHits += covered.count
        }
        return ([summary], covered)
    }

}
