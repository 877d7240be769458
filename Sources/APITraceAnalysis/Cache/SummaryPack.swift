import APITraceFormat
import Foundation

/// One pack file of the summary cache: the entries one run stored, written once and never changed.
///
/// A run that reads new files appends their entries to one temporary file as it goes (one
/// `pwrite` each: no file created, no rename and no `fsync` per entry), then writes the index and
/// renames the file into place, so other runs see a whole pack or none. Every pack has its own
/// unique name, so two runs writing at once never touch each other's files.
///
/// A pack may also hold the merge of all its entries (an unfiltered run merges them anyway): a
/// later unfiltered run in which every file of the pack is unchanged decodes and merges that one
/// summary instead of thousands of entries.
///
/// Layout, little-endian:
///
/// ```text
/// header   magic "ATSP" (UInt32), version (UInt32)
/// entries  whole entries (TraceSummaryCache+Entry: each with its own magic, version, checksum
///          and length), back to back
/// merged   optional: the merge of all the entries, as an entry without a key (magic, version,
///          checksum, length, then the summary)
/// index    per entry: key (UInt64, the hash of the trace file's absolute path), offset (UInt64),
///          length (UInt64), and the key the entry was stored under: size (Int64), modification
///          time in ns (Int64), inode (UInt64), granularity (Int64)
/// footer   offset and length of the merged summary (UInt64 each, 0 and 0 when there is none),
///          index offset (UInt64), entry count (UInt64), checksum of the index and the merged
///          summary's place (UInt64), magic (UInt32), version (UInt32)
/// ```
///
/// A pack is read as hostile input: the footer and the index must agree with the file's size and
/// checksum, every record must lie between the header and the index and be no larger than
/// ``TraceSummaryCache/maximumEntryBytes``; anything else and the whole pack is ignored. Entries
/// are checked again one by one when used.
enum SummaryPack {
    /// `ATSP`.
    static let magic: UInt32 = 0x5053_5441
    static let version: UInt32 = 1
    static let headerBytes = 8
    static let recordBytes = 56
    static let footerBytes = 48
    static let suffix = ".pack"

    /// Where one entry lies in a pack.
    struct Record: Sendable {
        var key: UInt64
        var offset: Int64
        var length: Int
        /// The trace file's status and the granularity the entry was stored for (checked again
        /// inside the entry; here so a run can tell whether the pack's merged summary applies).
        var status: FileStatus
        var granularity: Int64
    }

    /// A unique file name that sorts by creation time: nanoseconds since 1970 in hex, the process
    /// id and a random number.
    static func uniqueName() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanoseconds = UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
        let hex = String(nanoseconds, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + "-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    // MARK: - Reading

    /// A pack opened for the run. The descriptor stays open, so an entry read later comes from the
    /// file that was indexed even if another run has removed the pack since.
    final class Opened: Sendable {
        let name: String
        let size: Int64
        let records: [Record]
        /// Where the merge of all entries lies, when the pack has one.
        let merged: (offset: Int64, length: Int)?
        private let descriptor: Int32

        /// Opens and checks a pack; nil when it cannot be read or is not a whole pack of this version.
        init?(path: String) {
            // Without blocking or following a link: a FIFO or a link to /dev/zero named `*.pack`
            // is skipped, never read.
            guard let fd = try? RegularFile.open(path).get() else { return nil }
            var info = stat()
            guard fstat(fd, &info) == 0, let index = Self.index(fd, size: Int64(info.st_size)) else {
                close(fd)
                return nil
            }
            name = (path as NSString).lastPathComponent
            size = Int64(info.st_size)
            records = index.records
            merged = index.merged
            descriptor = fd
        }

        deinit { close(descriptor) }

        /// The bytes of one entry of this pack, or nil when they cannot be read whole.
        func read(_ record: Record) -> [UInt8]? {
            SummaryPack.read(descriptor, offset: record.offset, count: record.length)
        }

        /// The bytes of the merged summary, when the pack has one and they can be read whole.
        func readMerged() -> [UInt8]? {
            merged.flatMap { SummaryPack.read(descriptor, offset: $0.offset, count: $0.length) }
        }

        private static func index(_ fd: Int32, size: Int64) -> (records: [Record], merged: (offset: Int64, length: Int)?)? {
            guard size >= Int64(headerBytes + footerBytes),
                  let footer = SummaryPack.read(fd, offset: size - Int64(footerBytes), count: footerBytes) else { return nil }
            return footer.withUnsafeBytes { raw -> (records: [Record], merged: (offset: Int64, length: Int)?)? in
                var r = BinaryReader(raw)
                guard let mergedOffset = try? r.get(UInt64.self), let mergedLength = try? r.get(UInt64.self),
                      let indexOffset = try? r.get(UInt64.self), let count = try? r.get(UInt64.self),
                      let sum = try? r.get(UInt64.self), (try? r.get(UInt32.self)) == magic,
                      (try? r.get(UInt32.self)) == version,
                      // Every sum below is of values already bounded by the file's size: no forged
                      // field can overflow them.
                      indexOffset >= UInt64(headerBytes), indexOffset <= UInt64(size), count <= UInt64(size) / UInt64(recordBytes),
                      indexOffset + count * UInt64(recordBytes) + UInt64(footerBytes) == UInt64(size),
                      mergedLength == 0 || (mergedOffset >= UInt64(headerBytes) && mergedLength >= UInt64(TraceSummaryCache.prefixBytes)
                          && mergedLength <= UInt64(TraceSummaryCache.maximumEntryBytes) && mergedOffset <= indexOffset
                          && mergedLength <= indexOffset - mergedOffset),
                      var index = SummaryPack.read(fd, offset: Int64(indexOffset), count: Int(count) * recordBytes)
                else { return nil }
                // The checksum covers the merged summary's place too.
                withUnsafeBytes(of: mergedOffset.littleEndian) { index.append(contentsOf: $0) }
                withUnsafeBytes(of: mergedLength.littleEndian) { index.append(contentsOf: $0) }
                let merged = mergedLength == 0 ? nil : (offset: Int64(mergedOffset), length: Int(mergedLength))
                return index.withUnsafeBytes { raw -> (records: [Record], merged: (offset: Int64, length: Int)?)? in
                    guard TraceSummaryCache.checksum(raw) == sum else { return nil }
                    var r = BinaryReader(raw)
                    var records: [Record] = []
                    records.reserveCapacity(Int(count))
                    for _ in 0..<count {
                        guard let key = try? r.get(UInt64.self), let offset = try? r.get(UInt64.self),
                              let length = try? r.get(UInt64.self), let size = try? r.get(Int64.self),
                              let modified = try? r.get(Int64.self), let inode = try? r.get(UInt64.self),
                              let granularity = try? r.get(Int64.self),
                              offset >= UInt64(headerBytes), length >= UInt64(TraceSummaryCache.prefixBytes),
                              length <= UInt64(TraceSummaryCache.maximumEntryBytes), offset <= indexOffset,
                              length <= indexOffset - offset
                        else { return nil }
                        records.append(Record(key: key, offset: Int64(offset), length: Int(length),
                                              status: FileStatus(size: size, modifiedNanoseconds: modified, inode: inode),
                                              granularity: granularity))
                    }
                    return (records, merged)
                }
            }
        }
    }

    /// What a cache folder holds: its packs oldest first, and the files housekeeping removes.
    struct Listing {
        var packs: [String] = []
        /// Entries of the old one-file-per-entry format (version 1), never read.
        var legacyEntries: [String] = []
        /// Temporary packs left by runs that ended before renaming them (older than an hour).
        var abandoned: [String] = []
        /// Pack names that are not regular files (a FIFO, a socket, a link): never opened.
        var refused: [RegularFile.Refusal] = []
    }

    static func list(_ directory: String) -> Listing {
        var listing = Listing()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return listing }
        let hourAgo = (Int64(Date().timeIntervalSince1970) - 3600) * 1_000_000_000
        for name in names.sorted() {
            let path = directory + "/" + name
            if name.hasSuffix(suffix), !name.hasPrefix(".") {
                if let refusal = RegularFile.check(path), !refusal.isMissing {
                    listing.refused.append(refusal)
                } else {
                    listing.packs.append(path)
                }
            } else if name.hasSuffix(".summary") {
                listing.legacyEntries.append(path)
            } else if name.hasPrefix("."), name.hasSuffix(suffix + ".tmp") || AtomicFileWriter.isTemporary(name, ofTargetsEndingIn: suffix),
                      let status = FileStatus(path: path), status.modifiedNanoseconds < hourAgo {
                listing.abandoned.append(path)
            }
        }
        return listing
    }

    // MARK: - Writing

    /// A pack being written: entries are appended from any thread, then ``finish()`` writes the
    /// index and renames it into place.
    final class Writer: Sendable {
        let final: String
        /// The temporary file, through the one atomic writer: created exclusively without following
        /// links, `fsync`ed and renamed by ``finish(merged:)``. Entries are `pwrite`n to its
        /// descriptor from several threads (each at offsets reserved under `state`'s lock); only
        /// `finish` and `deinit` commit or discard it, once.
        private let file: AtomicFileWriter
        private let descriptor: Int32
        private let state = Locked(State())

        private struct State {
            var end = Int64(SummaryPack.headerBytes)
            var records: [Record] = []
            var failed = false
            var closed = false
        }

        /// Creates the temporary file of a new pack in `directory`; nil when it cannot be written.
        init?(directory: String) {
            final = directory + "/" + SummaryPack.uniqueName() + SummaryPack.suffix
            guard let file = try? AtomicFileWriter(path: final) else { return nil }
            var header = BinaryWriter(capacity: SummaryPack.headerBytes)
            header.put(SummaryPack.magic); header.put(SummaryPack.version)
            guard SummaryPack.write(file.descriptor, header.bytes, at: 0) else {
                file.discard()
                return nil
            }
            self.file = file
            descriptor = file.descriptor
        }

        deinit {
            let open = state.withLock { state in
                defer { state.closed = true }
                return !state.closed
            }
            if open { file.discard() }
        }

        /// Bytes of entries appended so far.
        var entryBytes: Int64 { state.withLock { $0.end } - Int64(SummaryPack.headerBytes) }

        /// Appends one whole entry; false once writing has failed (the pack will not be kept).
        @discardableResult
        func append(_ entry: [UInt8], key: UInt64, status: FileStatus, granularity: Int64) -> Bool {
            // The space is reserved under the lock; the write itself happens outside it.
            let offset: Int64? = state.withLock { state in
                guard !state.failed, !state.closed else { return nil }
                defer { state.end += Int64(entry.count) }
                return state.end
            }
            guard let offset else { return false }
            let written = SummaryPack.write(descriptor, entry, at: offset)
            state.withLock { state in
                if written {
                    state.records.append(Record(key: key, offset: offset, length: entry.count, status: status, granularity: granularity))
                } else {
                    state.failed = true
                }
            }
            return written
        }

        /// Writes the merged summary (when given: the merge of exactly the entries appended), the
        /// index and the footer, and renames the pack into place: the number of entries it holds,
        /// or nil when nothing was kept (no entries, or a write failed).
        func finish(merged: [UInt8]?) -> Int? {
            let (end, records, failed) = state.withLock { state in
                defer { state.closed = true }
                return state.closed ? (0, [], true) : (state.end, state.records.sorted { $0.offset < $1.offset }, state.failed)
            }
            guard !failed, !records.isEmpty else {
                file.discard()
                return nil
            }
            var indexOffset = end
            var mergedPlace: (offset: UInt64, length: UInt64) = (0, 0)
            if let merged, merged.count <= TraceSummaryCache.maximumEntryBytes, SummaryPack.write(descriptor, merged, at: end) {
                mergedPlace = (UInt64(end), UInt64(merged.count))
                indexOffset += Int64(merged.count)
            }
            var w = BinaryWriter(capacity: records.count * SummaryPack.recordBytes + SummaryPack.footerBytes)
            for record in records {
                w.put(record.key); w.put(UInt64(record.offset)); w.put(UInt64(record.length))
                w.put(record.status.size); w.put(record.status.modifiedNanoseconds); w.put(record.status.inode); w.put(record.granularity)
            }
            w.put(mergedPlace.offset); w.put(mergedPlace.length)
            let sum = w.bytes.withUnsafeBytes { TraceSummaryCache.checksum($0) }
            var footer = BinaryWriter(capacity: SummaryPack.footerBytes)
            footer.put(mergedPlace.offset); footer.put(mergedPlace.length)
            footer.put(UInt64(indexOffset)); footer.put(UInt64(records.count)); footer.put(sum)
            footer.put(SummaryPack.magic); footer.put(SummaryPack.version)
            let index = Array(w.bytes.dropLast(16)) + footer.bytes
            guard SummaryPack.write(descriptor, index, at: indexOffset) else {
                file.discard()
                return nil
            }
            do { try file.commit() } catch { return nil }
            return records.count
        }
    }

    // MARK: - I/O

    static func read(_ fd: Int32, offset: Int64, count: Int) -> [UInt8]? {
        guard count >= 0, offset >= 0 else { return nil }
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                done += n
            }
            // Whatever was not read is zeroed, then the whole buffer is dropped.
            if done < count {
                (buffer.baseAddress! + done).initialize(repeating: 0, count: count - done)
                complete = false
            }
            initialized = count
        }
        return complete ? bytes : nil
    }

    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64) -> Bool {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
    }
}
