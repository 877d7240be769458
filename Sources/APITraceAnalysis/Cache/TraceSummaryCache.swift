package import APITraceFormat
import Foundation

/// Per-file summaries kept between `apitrace report` runs, so a folder re-read every few minutes
/// only decompresses the files that arrived or changed since.
///
/// Each entry holds one trace file's whole ``TraceSummary`` (warnings included) read without
/// filters, keyed by the file's absolute path. An entry is served only while the trace file's
/// path, size, modification time (in nanoseconds) and inode all match what was recorded, and only
/// for the same time-series granularity; anything else is a miss and the file is read again. Only
/// finished files are stored (``TraceFileSelection/SelectedFile/isCacheable``: the writer has
/// started a later file, so it will not append to this one).
///
/// The entries one run stores go into one pack file in ``directory`` (``SummaryPack``), appended
/// as the files are read and renamed into place with its index when the run ends (``finish()``):
/// no file is created per entry. Every pack has a unique name and is never changed once renamed,
/// so two reports running at once each publish their own pack and read each other's whole. Every
/// entry is versioned and checksummed, and decoded as hostile input (bounded counts, no allocation
/// past the entry's size, itself at most ``maximumEntryBytes``): a damaged, truncated or foreign
/// pack or entry is a miss, never a crash. When the folder cannot be created or written (a
/// read-only disk, another user's folder) the cache only reads. When more than ``maximumPacks``
/// packs or more than ``maximumBytes`` pile up, a run that stored entries merges the packs into
/// one, keeping each file's newest entry and dropping the oldest-written past the bound.
///
/// ```swift
/// let cache = TraceSummaryCache(directory: TraceSummaryCache.defaultDirectory)
/// let summary = TraceSummarizer(cache: cache).summarize(paths: ["traces"])
/// ```
public final class TraceSummaryCache: Sendable {
    /// The folder holding the packs.
    public let directory: String
    /// Most bytes of packs kept; past it the oldest-written entries are dropped.
    public let maximumBytes: Int64
    /// The default bound: 256 MB (a week of a busy fleet's files at a few tens of KB each).
    public static let defaultMaximumBytes: Int64 = 256 << 20
    /// Largest entry read or written (larger summaries are not cached).
    public static let maximumEntryBytes = 16 << 20

    /// What a run did with the cache.
    public struct Statistics: Sendable, Equatable {
        /// Files whose summary came from the cache.
        public var hits = 0
        /// Of the hits, files served through a pack's merged summary, without reading their entries.
        public var mergedHits = 0
        /// Cacheable files read because no valid entry matched them.
        public var misses = 0
        /// Entries written.
        public var stored = 0
        /// Entries dropped to stay within ``TraceSummaryCache/maximumBytes`` when packs were merged.
        public var evicted = 0
        /// True when entries could not be written (the cache only read).
        public var readOnly = false
    }

    private let state = Locked(State())

    private struct State {
        var stats = Statistics()
        /// The packs found at the first lookup, and where each key's entries lie in them, newest first.
        var index: Index?
        /// The pack this run's entries go to, made on the first store.
        var writer: SummaryPack.Writer?
    }

    struct Index {
        var packs: [SummaryPack.Opened] = []
        var entries: [UInt64: [(pack: Int, record: Int)]] = [:]
        /// Pack names that are not regular files (a FIFO, a socket, a link), skipped unread.
        var skipped: [TraceReadWarning] = []
    }

    /// Warnings naming the pack names of the cache folder that are not regular files and were
    /// skipped unread (a FIFO or a link to `/dev/zero` named `*.pack` would otherwise hang a report).
    package var skippedPacks: [TraceReadWarning] { state.withLock { $0.index?.skipped ?? [] } }

    /// Most packs kept before they are merged into one (each run that read new files adds one).
    static let maximumPacks = 16

    /// Creates a cache in `directory` (created on the first write).
    public init(directory: String, maximumBytes: Int64 = TraceSummaryCache.defaultMaximumBytes) {
        self.directory = directory
        self.maximumBytes = max(0, maximumBytes)
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

    // MARK: - Entries

    /// A cached whole-file summary.
    struct Entry {
        /// The summary of the whole file, read without filters.
        var summary: TraceSummary
        /// The file's header `app_version`, when it had a header (`nil` inside when the header has none).
        var header: String??
    }

    /// Opens the folder's packs and indexes their entries, once; lookups before it do it themselves.
    func loadIndex() {
        guard state.withLock({ $0.index == nil }) else { return }
        var index = Index()
        let listing = SummaryPack.list(directory)
        index.skipped = listing.refused.map {
            TraceReadWarning(path: $0.path, kind: .unreadable("report cache pack \($0.reason)"), eventsKept: 0)
        }
        for path in listing.packs {
            guard let pack = SummaryPack.Opened(path: path) else { continue }
            let number = index.packs.count
            index.packs.append(pack)
            for (i, record) in pack.records.enumerated() {
                index.entries[record.key, default: []].insert((number, i), at: 0)
            }
        }
        // Listed oldest first, so each key's newest entry is first; another run may have won the race.
        state.withLock { state in
            if state.index == nil { state.index = index }
        }
    }

    /// The entry for a file whose absolute path is `absolutePath`, when one matches its status and
    /// the granularity; its warnings name the file as `path` (the spelling of this run).
    func entry(absolutePath: String, path: String, status: FileStatus, granularity: Int64) -> Entry? {
        loadIndex()
        let key = Self.key(absolutePath)
        let candidates: [(SummaryPack.Opened, SummaryPack.Record)] = state.withLock { state in
            (state.index?.entries[key] ?? []).map { (state.index!.packs[$0.pack], state.index!.packs[$0.pack].records[$0.record]) }
        }
        // Newest first; an older entry can still match when two runs raced over a changing file.
        var found: Entry?
        for (pack, record) in candidates {
            found = pack.read(record).flatMap {
                Self.decode($0, absolutePath: absolutePath, status: status, granularity: granularity)
            }
            if found != nil { break }
        }
        state.withLock { found == nil ? ($0.stats.misses += 1) : ($0.stats.hits += 1) }
        guard var entry = found else { return nil }
        if path != absolutePath {
            entry.summary.warnings = entry.summary.warnings.map {
                TraceReadWarning(path: $0.path == absolutePath ? path : $0.path, kind: $0.kind, eventsKept: $0.eventsKept)
            }
        }
        return entry
    }

    /// Adds the whole-file summary of a file to this run's pack (warnings naming it by `path` are
    /// stored by its absolute path); true when it was added. The pack becomes visible to other runs
    /// at ``finish(merged:)``.
    @discardableResult
    func store(_ entry: Entry, absolutePath: String, path: String, status: FileStatus, granularity: Int64) -> Bool {
        var entry = entry
        if path != absolutePath {
            entry.summary.warnings = entry.summary.warnings.map {
                TraceReadWarning(path: $0.path == path ? absolutePath : $0.path, kind: $0.kind, eventsKept: $0.eventsKept)
            }
        }
        let bytes = Self.encode(entry, absolutePath: absolutePath, status: status, granularity: granularity)
        guard bytes.count <= Self.maximumEntryBytes, let writer = packWriter() else { return false }
        let written = writer.append(bytes, key: Self.key(absolutePath), status: status, granularity: granularity)
        state.withLock { written ? ($0.stats.stored += 1) : ($0.stats.readOnly = true) }
        return written
    }

    /// This run's pack, created on first use. Made under the lock, once per run: the other
    /// threads wait for one `mkdir` and one `open` rather than each making a pack of its own.
    private func packWriter() -> SummaryPack.Writer? {
        state.withLock { state in
            if state.writer == nil, !state.stats.readOnly {
                if (try? FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil {
                    state.writer = SummaryPack.Writer(directory: directory)
                }
                if state.writer == nil { state.stats.readOnly = true }
            }
            return state.writer
        }
    }

    /// Ends the run: renames this run's pack into place, then, when the folder holds more than
    /// ``maximumPacks`` packs or more than ``maximumBytes``, merges its packs into one, dropping
    /// superseded entries and the oldest-written past the bound. Does nothing after a run that
    /// stored nothing.
    ///
    /// `merged`, when given, must be the merge of exactly the entries this run stored (warnings
    /// naming files by their absolute paths): the pack keeps it for later unfiltered runs.
    public func finish() { finish(merged: nil) }

    func finish(merged: TraceSummary?) {
        guard let writer = state.withLock({ state -> SummaryPack.Writer? in
            defer { state.writer = nil }
            return state.writer
        }) else { return }
        guard writer.finish(merged: merged.map(Self.encodeMerged)) != nil else {
            state.withLock { $0.stats.readOnly = true }
            return
        }
        let evicted = Self.compactIfNeeded(directory: directory, maximumBytes: maximumBytes)
        state.withLock { $0.stats.evicted += evicted }
    }

    /// True when a pack of the folder holds a merged summary (so ``mergedSummaries(of:granularity:)`` may find one).
    var hasMergedSummaries: Bool {
        loadIndex()
        return state.withLock { $0.index?.packs.contains { $0.merged != nil } ?? false }
    }

    /// A file of this run, for ``mergedSummaries(of:granularity:)``.
    struct RunFile {
        var path: String
        var absolutePath: String
        var status: FileStatus
    }

    /// The merged summaries of packs whose every entry is a file of this run, unchanged, stored for
    /// this granularity: each replaces reading and merging those files one by one. Returns the
    /// summaries (warnings naming files as this run spells them) and the paths they cover. Newest
    /// pack first; a pack sharing a file with one already used is skipped.
    func mergedSummaries(of files: [RunFile], granularity: Int64) -> (summaries: [TraceSummary], covered: Set<String>) {
        loadIndex()
        var byKey: [UInt64: RunFile] = [:]
        var duplicated = Set<UInt64>()
        for file in files {
            let key = Self.key(file.absolutePath)
            if byKey.updateValue(file, forKey: key) != nil { duplicated.insert(key) }
        }
        let packs = state.withLock { $0.index?.packs ?? [] }
        var summaries: [TraceSummary] = []
        var coveredKeys = Set<UInt64>()
        var covered = Set<String>()
        for pack in packs.reversed() where pack.merged != nil && !pack.records.isEmpty {
            var spelling: [String: String] = [:]
            let applies = pack.records.allSatisfy { record in
                guard let file = byKey[record.key], !duplicated.contains(record.key), !coveredKeys.contains(record.key),
                      file.status == record.status, record.granularity == granularity else { return false }
                spelling[file.absolutePath] = file.path
                return true
            } && Set(pack.records.map(\.key)).count == pack.records.count
            guard applies, let bytes = pack.readMerged(),
                  var summary = bytes.withUnsafeBytes({ Self.decodeMerged($0) }) else { continue }
            summary.warnings = summary.warnings.map {
                TraceReadWarning(path: spelling[$0.path] ?? $0.path, kind: $0.kind, eventsKept: $0.eventsKept)
            }
            for record in pack.records {
                coveredKeys.insert(record.key)
                covered.insert(byKey[record.key]!.path)
            }
            summaries.append(summary)
        }
        state.withLock { $0.stats.hits += covered.count; $0.stats.mergedHits += covered.count }
        return (summaries, covered)
    }

    /// The key of a trace file in a pack's index: a hash of its absolute path (the path itself is
    /// inside the entry and checked).
    static func key(_ absolutePath: String) -> UInt64 { SessionCount.hash(absolutePath) }
}
