import APITraceFormat
import Foundation

/// Per-file summaries kept between `apitrace report` runs, so a folder re-read every few minutes
/// only decompresses the files that arrived or changed since.
///
/// Each entry is one small binary file in ``directory``, named after a hash of the trace file's
/// absolute path, holding the file's whole ``TraceSummary`` (warnings included) read without
/// filters. An entry is served only while the trace file's path, size, modification time (in
/// nanoseconds) and inode all match what was recorded, and only for the same time-series
/// granularity; anything else is a miss and the file is read again. Only finished files are
/// stored (``TraceFileSelection/SelectedFile/isCacheable``: the writer has started a later file,
/// so it will not append to this one).
///
/// Entries are written to a temporary file and renamed into place, so two reports running at once
/// never see a half-written entry; the last writer wins and both entries are valid. Every entry is
/// versioned and checksummed, and decoded as hostile input (bounded counts, no allocation past the
/// entry's size, itself at most ``maximumEntryBytes``): a damaged, truncated or foreign entry is
/// a miss, never a crash. When the folder cannot be created or written (a read-only disk, another
/// user's folder) the cache only reads. After a run that stored entries, the oldest-written
/// entries are removed until the folder holds at most ``maximumBytes``.
///
/// ```swift
/// let cache = TraceSummaryCache(directory: TraceSummaryCache.defaultDirectory)
/// let summary = TraceSummarizer(cache: cache).summarize(paths: ["traces"])
/// ```
public final class TraceSummaryCache: Sendable {
    /// The folder holding the entries.
    public let directory: String
    /// Most bytes of entries kept; the oldest-written are removed past it.
    public let maximumBytes: Int64
    /// The default bound: 256 MB (a week of a busy fleet's files at a few tens of KB each).
    public static let defaultMaximumBytes: Int64 = 256 << 20
    /// Largest entry read or written (larger summaries are not cached).
    public static let maximumEntryBytes = 16 << 20

    /// What a run did with the cache.
    public struct Statistics: Sendable, Equatable {
        /// Files whose summary came from the cache.
        public var hits = 0
        /// Cacheable files read because no valid entry matched them.
        public var misses = 0
        /// Entries written.
        public var stored = 0
        /// Entries removed to stay within ``TraceSummaryCache/maximumBytes``.
        public var evicted = 0
        /// True when entries could not be written (the cache only read).
        public var readOnly = false
    }

    private let state = Locked(State())

    private struct State {
        var stats = Statistics()
        var directoryReady = false
        var temporaryCounter = 0
    }

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

    /// The entry for a file whose absolute path is `absolutePath`, when one matches its status and
    /// the granularity; its warnings name the file as `path` (the spelling of this run).
    func entry(absolutePath: String, path: String, status: FileStatus, granularity: Int64) -> Entry? {
        let found = read(entryPath(absolutePath)).flatMap {
            Self.decode($0, absolutePath: absolutePath, status: status, granularity: granularity)
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

    /// Stores the whole-file summary of a file (warnings naming it by `path` are stored by its absolute path).
    func store(_ entry: Entry, absolutePath: String, path: String, status: FileStatus, granularity: Int64) {
        var entry = entry
        if path != absolutePath {
            entry.summary.warnings = entry.summary.warnings.map {
                TraceReadWarning(path: $0.path == path ? absolutePath : $0.path, kind: $0.kind, eventsKept: $0.eventsKept)
            }
        }
        let bytes = Self.encode(entry, absolutePath: absolutePath, status: status, granularity: granularity)
        guard bytes.count <= Self.maximumEntryBytes else { return }
        let target = entryPath(absolutePath)
        let counter: Int? = state.withLock { state in
            guard prepareDirectory(&state) else { return nil }
            state.temporaryCounter += 1
            return state.temporaryCounter
        }
        guard let counter else { return }
        let temporary = "\(directory)/.\(getpid())-\(counter)-\((target as NSString).lastPathComponent).tmp"
        let written = Self.write(bytes, to: temporary) && rename(temporary, target) == 0
        if !written { unlink(temporary) }
        state.withLock { written ? ($0.stats.stored += 1) : ($0.stats.readOnly = true) }
    }

    /// Removes the oldest-written entries while the folder holds more than ``maximumBytes``; only
    /// after a run that stored entries.
    public func evictIfNeeded() {
        guard statistics.stored > 0, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        var entries: [(path: String, size: Int64, modified: Int64)] = []
        var total: Int64 = 0
        for name in names where name.hasSuffix(Self.entrySuffix) {
            let path = directory + "/" + name
            guard let status = FileStatus(path: path) else { continue }
            entries.append((path, status.size, status.modifiedNanoseconds))
            total += status.size
        }
        guard total > maximumBytes else { return }
        // Down to 80 % of the bound, so the next runs do not each evict a few entries.
        let goal = maximumBytes / 5 * 4
        var evicted = 0
        for entry in entries.sorted(by: { ($0.modified, $0.path) < ($1.modified, $1.path) }) where total > goal {
            if unlink(entry.path) == 0 { evicted += 1 }
            total -= entry.size
        }
        state.withLock { $0.stats.evicted += evicted }
    }

    static let entrySuffix = ".summary"

    /// The entry file of a trace file: a hash of its absolute path (the path itself is inside and checked).
    func entryPath(_ absolutePath: String) -> String {
        let hash = SessionCount.hash(absolutePath)
        let hex = String(hash, radix: 16)
        return directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex + Self.entrySuffix
    }

    /// Creates the folder once; called under the state's lock.
    private func prepareDirectory(_ state: inout State) -> Bool {
        if state.stats.readOnly { return false }
        if state.directoryReady { return true }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            state.directoryReady = true
        } catch {
            state.stats.readOnly = true
        }
        return state.directoryReady
    }

    private func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, info.st_size <= Self.maximumEntryBytes else { return nil }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = bytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + done, size - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    private static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { close(fd); return false }
            done += n
        }
        return close(fd) == 0
    }

    // MARK: - Format

    /// `ATSC`; bump ``formatVersion`` whenever the summary or its encoding changes.
    static let magic: UInt32 = 0x4353_5441
    static let formatVersion: UInt32 = 1
    /// Magic, version, checksum and length.
    static let prefixBytes = 24

    static func encode(_ entry: Entry, absolutePath: String, status: FileStatus, granularity: Int64) -> [UInt8] {
        var w = BinaryWriter(capacity: 16_384)
        w.put(magic); w.put(formatVersion); w.put(UInt64(0)); w.put(UInt64(0))
        w.put(absolutePath)
        w.put(status.size); w.put(status.modifiedNanoseconds); w.put(status.inode)
        w.put(granularity)
        switch entry.header {
        case .none: w.put(UInt8(0))
        case .some(.none): w.put(UInt8(1))
        case .some(.some(let version)): w.put(UInt8(2)); w.put(version)
        }
        entry.summary.encode(into: &w)
        var bytes = w.bytes
        let payload = bytes.count - prefixBytes
        let sum = bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[prefixBytes...])) }
        withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(8..<16, with: $0) }
        withUnsafeBytes(of: UInt64(payload).littleEndian) { bytes.replaceSubrange(16..<24, with: $0) }
        return bytes
    }

    static func decode(_ bytes: [UInt8], absolutePath: String, status: FileStatus, granularity: Int64) -> Entry? {
        bytes.withUnsafeBytes { raw -> Entry? in
            var r = BinaryReader(raw)
            do {
                guard try r.get(UInt32.self) == magic, try r.get(UInt32.self) == formatVersion else { return nil }
                let sum = try r.get(UInt64.self), length = try r.get(UInt64.self)
                guard length == UInt64(raw.count - prefixBytes),
                      checksum(UnsafeRawBufferPointer(rebasing: raw[prefixBytes...])) == sum else { return nil }
                guard try r.string() == absolutePath,
                      try r.get(Int64.self) == status.size, try r.get(Int64.self) == status.modifiedNanoseconds,
                      try r.get(UInt64.self) == status.inode, try r.get(Int64.self) == granularity else { return nil }
                let header: String??
                switch try r.get(UInt8.self) {
                case 0: header = .none
                case 1: header = .some(.none)
                case 2: header = .some(try r.string())
                default: return nil
                }
                let summary = try TraceSummary(decoding: &r)
                guard r.remaining == 0 else { return nil }
                return Entry(summary: summary, header: header)
            } catch {
                return nil
            }
        }
    }

    /// A fast 64-bit checksum (four multiply-xor lanes over 8-byte words), to catch damaged and
    /// truncated entries; not a defence against a deliberate forger, which the bounded decoding is.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let prime: UInt64 = 0x9E37_79B1_85EB_CA87
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (1, 2, 3, 4)
        var i = 0
        let n = bytes.count
        while i + 32 <= n {
            lanes.0 = (lanes.0 ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
            lanes.1 = (lanes.1 ^ bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* prime
            lanes.2 = (lanes.2 ^ bytes.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)) &* prime
            lanes.3 = (lanes.3 ^ bytes.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) &* prime
            lanes.0 ^= lanes.0 >> 29; lanes.1 ^= lanes.1 >> 29; lanes.2 ^= lanes.2 >> 29; lanes.3 ^= lanes.3 >> 29
            i += 32
        }
        var h = lanes.0 &+ (lanes.1 &* 31) &+ (lanes.2 &* 961) &+ (lanes.3 &* 29_791) &+ UInt64(n)
        while i < n {
            h = (h ^ UInt64(bytes[i])) &* prime
            i += 1
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        return h
    }
}
