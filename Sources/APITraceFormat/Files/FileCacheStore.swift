#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one per-file cache store: what a reader took from each trace file, keyed by the file
/// (its path, and the ``FileStatus`` it had: size, modification time, inode), so a later run reads
/// only what changed. Clients (the alert's count cache, the report's and the export's caches)
/// keep their own sections in an entry, as bytes they encode with ``BinaryWriter``.
///
/// A file that grows by appended gzip members (a collector's open file) carries an
/// ``AppendedPrefix``: its sections hold what was read up to that member boundary, and stay valid
/// while the bytes before it are unchanged, whatever the file's size and time.
///
/// The store is one file, read with one `read` at ``init(path:client:)``; entries are indexed then,
/// and decoded only when asked for (a run needs the files of its window, not the week the cache
/// knows). ``save()`` keeps the entries this run used, copying those it did not change as they
/// were read, and, with a ``Retention/keeping(maximumBytes:unused:)`` retention (a cache shared by
/// runs over different folders), the unused entries its client still wants, within a bound; it
/// then also takes the entries another process saved since this one read the file, under a lock,
/// so two runs saving at once both keep what they stored. A damaged, truncated or foreign store
/// file is ignored (``problem`` says why, naming the file) and rebuilt; every length and count in
/// it is checked against the bytes left.
///
/// ```text
/// "ATFS" u32 version  string client  u32 entries
/// entry: u32 length | string path  i64 size  i64 mtime-ns  u64 inode  u8 prefix [i64 offset u64 head u64 tail]
///                   | u32 sections { string name  u32 length  bytes }
/// ```
package final class FileCacheStore: Sendable {
    /// One file's entry.
    package struct Entry: Sendable, Equatable {
        /// The file's status when the entry was made (for an appended file: when its prefix was read).
        package var status: FileStatus
        /// For a file that grows by appended members: how far the sections go.
        package var prefix: AppendedPrefix?
        /// The clients' sections, by name.
        package var sections: [String: [UInt8]]

        package init(status: FileStatus, prefix: AppendedPrefix? = nil, sections: [String: [UInt8]] = [:]) {
            self.status = status
            self.prefix = prefix
            self.sections = sections
        }
    }

    /// Which entries ``save()`` keeps besides those the run used.
    package enum Retention: Sendable {
        /// Only the entries this run used or changed (a cron job's cache over one folder).
        case usedOnly
        /// Also the entries not used this run for which `unused` is true (given the entry's file),
        /// and those another process saved meanwhile, in a file of at most `maximumBytes`: past it,
        /// unused entries go first, then used ones, oldest-named first, down to 80 % of the bound.
        case keeping(maximumBytes: Int, unused: @Sendable (String) -> Bool)
    }

    /// What ``save()`` did.
    package enum SaveOutcome: Sendable, Equatable {
        /// Nothing to write: the file holds what the run would write.
        case unchanged
        /// The file was written; `evicted` entries were left out to stay within the bound.
        case written(evicted: Int)
        /// The file could not be written (a read-only folder, a full disk): the next run is only slower.
        case failed(String)
    }

    /// Path of the store file ("" for a store kept in memory only).
    package let path: String
    /// Which entries a save keeps.
    package let retention: Retention
    /// The client whose entries the file holds, with its format version (`"alert-counts 2"`):
    /// a file of another client or version is not read.
    package let client: String
    private let state: Locked<State>

    private struct State {
        /// The file as read: entries not asked for stay here, undecoded.
        var raw: [UInt8] = []
        /// Where each file's entry lies in ``raw`` (the whole record, its length field included).
        var index: [String: Range<Int>] = [:]
        /// Entries decoded or changed by this run.
        var decoded: [String: Entry] = [:]
        var changed: Set<String> = []
        var used: Set<String> = []
        var dirty = false
        var problem: String?
    }

    /// Current version of the store's own layout.
    static let version: UInt32 = 1
    private static let magic: UInt32 = 0x5346_5441  // "ATFS" little-endian
    /// The largest store file read; a larger one is refused and rebuilt.
    package static let maximumBytes = 256 << 20
    /// Fewest bytes an entry record takes (length, empty path, status, no prefix, no sections).
    private static let minimumRecord = 4 + 4 + 24 + 1 + 4

    /// Opens the store at `path` for `client`; a missing file is an empty store, an unreadable or
    /// damaged one too (with a ``problem``).
    package init(path: String, client: String, retention: Retention = .usedOnly) {
        self.path = path
        self.client = client
        self.retention = retention
        var initial = State()
        switch RegularFile.read(path, limit: Self.maximumBytes) {
        case .success(nil): break
        case .success(let bytes?):
            do throws(BinaryReader.Invalid) {
                initial.index = try Self.index(bytes, client: client)
                initial.raw = bytes
            } catch {
                initial.problem = "ignoring the cache \(FileSystemPath.display(path)): it is damaged or of another version; it is rebuilt"
            }
        case .failure(let refusal):
            initial.problem = "ignoring the cache \(refusal); it is rebuilt"
        }
        state = Locked(initial)
    }

    /// A store kept in memory only (``save()`` writes nothing).
    package init(client: String) {
        path = ""
        self.client = client
        retention = .usedOnly
        state = Locked(State())
    }

    /// Why the store file was not used, naming it (nil when it was, or did not exist).
    package var problem: String? { state.withLock { $0.problem } }

    /// The entry of `file`, if the store has one (whatever the file's status now: the client decides).
    package func entry(_ file: String) -> Entry? {
        state.withLock { state in
            if let entry = state.decoded[file] { return entry }
            guard let range = state.index[file] else { return nil }
            let entry = state.raw.withUnsafeBytes { raw -> Entry? in
                var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[range]))
                return try? Self.decodeRecord(&reader).entry
            }
            guard let entry else {
                state.index[file] = nil
                state.problem = state.problem ?? "ignoring a damaged entry of the cache \(FileSystemPath.display(path)); it is rebuilt"
                return nil
            }
            state.decoded[file] = entry
            return entry
        }
    }

    /// Keeps the entry of `file` at the next ``save()``.
    package func markUsed(_ file: String) {
        state.withLock { state in
            if state.used.insert(file).inserted { state.dirty = true }
        }
    }

    /// Replaces the entry of `file` (nil removes it) and keeps it at the next ``save()``.
    package func update(_ file: String, _ change: (inout Entry?) -> Void) {
        state.withLock { state in
            var entry = state.decoded[file]
            if entry == nil, let range = state.index[file] {
                entry = state.raw.withUnsafeBytes { raw in
                    var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[range]))
                    return try? Self.decodeRecord(&reader).entry
                }
            }
            change(&entry)
            state.decoded[file] = entry
            state.index[file] = nil
            state.changed.insert(file)
            state.used.insert(file)
            state.dirty = true
        }
    }

    /// Writes the store (temporary file + rename) with the entries used since it was opened (and
    /// those the ``retention`` keeps); nothing when they are the ones read and none changed. A
    /// store that cannot be written (a full disk) only makes the next run slower.
    @discardableResult
    package func save() -> SaveOutcome {
        guard !path.isEmpty else { return .unchanged }
        if case .keeping(let maximumBytes, let unused) = retention { return saveKeeping(maximumBytes: maximumBytes, unused: unused) }
        return state.withLock { state -> SaveOutcome in
            guard state.dirty else { return .unchanged }
            let unchanged = state.changed.isEmpty && state.used.count == state.index.count && state.problem == nil
            state.dirty = false
            if unchanged, state.used.allSatisfy({ state.index[$0] != nil }) { return .unchanged }
            var writer = BinaryWriter(capacity: state.raw.count + 4096)
            Self.putHeader(&writer, client: client)
            var kept = 0
            var body = BinaryWriter(capacity: state.raw.count)
            for file in state.used.sorted() {
                if let range = state.index[file] {
                    body.put(raw: Array(state.raw[range]))
                    kept += 1
                } else if let entry = state.decoded[file] {
                    Self.putRecord(&body, file: file, entry: entry)
                    kept += 1
                }
            }
            writer.put(UInt32(kept))
            writer.put(raw: body.bytes)
            return Self.write(writer.bytes, to: path)
        }
    }

    /// ``save()`` for a ``Retention/keeping(maximumBytes:unused:)`` store: under an exclusive lock
    /// on `<path>.lock`, the file is read again, and the entries another process saved since this
    /// one read it are kept (the newer, unless this run changed the same file's entry).
    private func saveKeeping(maximumBytes: Int, unused: @Sendable (String) -> Bool) -> SaveOutcome {
        state.withLock { state -> SaveOutcome in
            guard state.dirty, !state.changed.isEmpty || state.problem != nil else {
                state.dirty = false
                return .unchanged
            }
            state.dirty = false
            // Without the lock (a folder that cannot be written) the write below fails the same way.
            let lock = try? RegularFile.openLock(path + ".lock").get()
            defer { if let lock { close(lock) } }
            if let lock, !Self.lock(lock, within: Self.lockWait) {
                // Held by a process that does not let go (stopped with ^Z, hung): this run's entries
                // are not saved rather than the run waiting for ever; the next run reads the files again.
                state.dirty = true
                return .failed("\(FileSystemPath.display(path + ".lock")) stayed locked by another process for \(Int(Self.lockWait)) s")
            }

            var records: [String: [UInt8]] = [:]
            for (file, range) in state.index where state.used.contains(file) || unused(file) {
                records[file] = Array(state.raw[range])
            }
            if case .success(let bytes?) = RegularFile.read(path, limit: Self.maximumBytes), bytes != state.raw,
               let theirs = try? Self.index(bytes, client: client) {
                for (file, range) in theirs where !state.changed.contains(file) { records[file] = Array(bytes[range]) }
            }
            for file in state.changed {
                if let entry = state.decoded[file] {
                    var record = BinaryWriter(capacity: 256)
                    Self.putRecord(&record, file: file, entry: entry)
                    records[file] = record.bytes
                } else {
                    records[file] = nil
                }
            }
            var total = Self.headerBytes(client: client) + records.values.reduce(0) { $0 + $1.count }
            var evicted = 0
            if total > maximumBytes {
                let goal = maximumBytes / 5 * 4
                let order = records.keys.filter { !state.used.contains($0) }.sorted() + records.keys.filter { state.used.contains($0) }.sorted()
                for file in order where total > goal {
                    total -= records.removeValue(forKey: file)?.count ?? 0
                    evicted += 1
                }
            }
            var writer = BinaryWriter(capacity: total)
            Self.putHeader(&writer, client: client)
            writer.put(UInt32(records.count))
            for file in records.keys.sorted() { writer.put(raw: records[file]!) }
            let outcome = Self.write(writer.bytes, to: path)
            if case .written = outcome { return .written(evicted: evicted) }
            return outcome
        }
    }

    /// How long a save waits for another process's save (which takes milliseconds) to finish.
    package static let lockWait: Double = 5

    /// Takes `fd`'s exclusive lock, trying every 10 ms for `seconds`; false if it stayed taken.
    private static func lock(_ fd: Int32, within seconds: Double) -> Bool {
        var attempts = Int(seconds * 100)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, attempts > 0 else { return false }
            attempts -= 1
            usleep(10_000)
        }
        return true
    }

    private static func write(_ bytes: [UInt8], to path: String) -> SaveOutcome {
        do throws(AtomicFileWriter.Failure) {
            try AtomicFileWriter.write(bytes, to: path)
            return .written(evicted: 0)
        } catch {
            return .failed(error.description)
        }
    }

    // MARK: - Layout

    /// Bytes of the header and entry count.
    private static func headerBytes(client: String) -> Int {
        var writer = BinaryWriter(capacity: 64)
        putHeader(&writer, client: client)
        return writer.bytes.count + 4
    }

    private static func putHeader(_ writer: inout BinaryWriter, client: String) {
        writer.put(magic)
        writer.put(version)
        writer.put(client)
    }

    private static func putRecord(_ out: inout BinaryWriter, file: String, entry: Entry) {
        var record = BinaryWriter(capacity: 256)
        record.put(file)
        record.put(entry.status.size)
        record.put(entry.status.modifiedNanoseconds)
        record.put(entry.status.inode)
        if let prefix = entry.prefix {
            record.put(UInt8(1))
            record.put(prefix.offset)
            record.put(prefix.headHash)
            record.put(prefix.tailHash)
        } else {
            record.put(UInt8(0))
        }
        record.putCount(entry.sections.count)
        for (name, bytes) in entry.sections.sorted(by: { $0.key < $1.key }) {
            record.put(name)
            record.putCount(bytes.count)
            record.put(raw: bytes)
        }
        out.put(UInt32(record.bytes.count))
        out.put(raw: record.bytes)
    }

    /// Where each entry lies, after checking the header and every record's length and path.
    private static func index(_ bytes: [UInt8], client: String) throws(BinaryReader.Invalid) -> [String: Range<Int>] {
        let found = bytes.withUnsafeBytes { raw in try? Self.index(raw, client: client) }
        guard let found else { throw BinaryReader.Invalid() }
        return found
    }

    private static func index(_ raw: UnsafeRawBufferPointer, client: String) throws(BinaryReader.Invalid) -> [String: Range<Int>] {
        do {
            var reader = BinaryReader(raw)
            guard try reader.get(UInt32.self) == magic, try reader.get(UInt32.self) == version, try reader.string() == client else {
                throw BinaryReader.Invalid()
            }
            let count = try reader.items(minimumSize: minimumRecord)
            var index: [String: Range<Int>] = [:]
            index.reserveCapacity(count)
            for _ in 0..<count {
                let start = reader.offset
                let length = Int(try reader.get(UInt32.self))
                guard length <= reader.remaining, length >= minimumRecord - 4 else { throw BinaryReader.Invalid() }
                var record = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[reader.offset..<(reader.offset + length)]))
                let file = try record.string()
                reader.skip(length)
                index[file] = start..<reader.offset
            }
            guard reader.remaining == 0 else { throw BinaryReader.Invalid() }
            return index
        }
    }

    /// One record (length field first), checked whole.
    private static func decodeRecord(_ reader: inout BinaryReader) throws(BinaryReader.Invalid) -> (file: String, entry: Entry) {
        let length = Int(try reader.get(UInt32.self))
        guard length == reader.remaining else { throw BinaryReader.Invalid() }
        let file = try reader.string()
        let status = FileStatus(size: try reader.bytesTotal(), modifiedNanoseconds: try reader.get(Int64.self), inode: try reader.get(UInt64.self))
        var prefix: AppendedPrefix?
        if try reader.bool() {
            let offset = try reader.bytesTotal()
            prefix = AppendedPrefix(offset: offset, headHash: try reader.get(UInt64.self), tailHash: try reader.get(UInt64.self))
        }
        let count = try reader.items(minimumSize: 8)
        var sections: [String: [UInt8]] = [:]
        sections.reserveCapacity(count)
        for _ in 0..<count {
            let name = try reader.string()
            let n = Int(try reader.get(UInt32.self))
            guard n <= reader.remaining else { throw BinaryReader.Invalid() }
            sections[name] = try reader.raw(n)
        }
        guard reader.remaining == 0 else { throw BinaryReader.Invalid() }
        return (file, Entry(status: status, prefix: prefix, sections: sections))
    }

    /// Every entry of a store file's bytes, checked whole (nil when anything is wrong): for tools
    /// and tests that look inside a store.
    package static func decodeAll(_ bytes: [UInt8], client: String) -> [String: Entry]? {
        guard let index = try? index(bytes, client: client) else { return nil }
        var entries: [String: Entry] = [:]
        for (file, range) in index {
            let decoded = bytes.withUnsafeBytes { raw -> Entry? in
                var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: raw[range]))
                return try? decodeRecord(&reader).entry
            }
            guard let decoded else { return nil }
            entries[file] = decoded
        }
        return entries
    }

    /// A store file's bytes holding `entries`: for tools and tests that forge or rewrite a store.
    package static func encodeAll(_ entries: [String: Entry], client: String) -> [UInt8] {
        var writer = BinaryWriter()
        putHeader(&writer, client: client)
        writer.put(UInt32(entries.count))
        for (file, entry) in entries.sorted(by: { $0.key < $1.key }) { putRecord(&writer, file: file, entry: entry) }
        return writer.bytes
    }
}
