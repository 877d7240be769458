import APITraceFormat
import Foundation

/// The durable record of one producer's files in a store: which segments (by SHA-256) are stored
/// where, and the producer's open file with its committed length. `.producers/<producer>.journal`.
///
/// One line per step, appended and `fsync`ed under an exclusive `flock` of the journal itself, so
/// several collectors (processes, or hosts on a file system with working `flock`) share a store:
///
/// ```text
/// O <open file, relative> <start ms> <header key>    an open file is begun
/// A <sha-256 hex> <end offset> <segment start ms>    a segment was appended; the open file is committed up to the offset
/// S <sealed file, relative>                          the open file is (being) renamed to its sealed name
/// D <sha-256 hex> <file, relative>                   a segment was stored as a file of its own
/// C <instance> <sha-256 hex>                          the next A or D line's segment was counted by this collector instance
/// ```
///
/// `C` is written with its `A` or `D` line in one write and one `fsync` (a collector that predates
/// it ignores the line), so a restarted instance can tell the segments it stored (``IngestCountLog``).
///
/// A line is written after the data it records is `fsync`ed, so a crash leaves data beyond the
/// last `A` (cut back on the next append) or a torn last line (cut off): never a recorded segment
/// that is not on disk, and never a stored segment that is not recorded for long enough to be
/// stored twice (the next append truncates the unrecorded member before it is sent again).
struct ProducerJournal {
    /// The producer's open file as the journal leaves it.
    struct OpenFile: Equatable {
        var relative: String
        var started: Int64
        var headerKey: String
        var committed: Int64 = 0
        var latestSegment: Int64
        var firstDigest: String?
    }

    let fd: Int32
    let path: String
    /// Segment digests to the file that holds them.
    private(set) var digests: [String: String] = [:]
    private(set) var open: OpenFile?
    /// Collector instance that stored each segment it names (`C` lines).
    private(set) var storedBy: [String: String] = [:]
    /// A seal recorded but perhaps not done (a crash between the line and the rename): redone by ``replayPendingSeal()``.
    private(set) var pendingSeal: (from: String, to: String)?

    /// Opens and locks the journal (blocking until no other collector holds it) and reads it.
    static func lock(_ path: String) throws(JournalError) -> ProducerJournal {
        let fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o640)
        guard fd >= 0 else { throw JournalError(code: errno) }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let code = JournalError(code: errno)
            Foundation.close(fd)
            throw code
        }
        var journal = ProducerJournal(fd: fd, path: path)
        do throws(JournalError) { try journal.read() } catch {
            journal.unlock()
            throw error
        }
        return journal
    }

    func unlock() {
        flock(fd, LOCK_UN)
        Foundation.close(fd)
    }

    /// Replays the lines; a torn last line (a crash in the middle of writing it) is cut off.
    private mutating func read() throws(JournalError) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var offset: off_t = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n < 0 { if errno == EINTR { continue }; throw JournalError(code: errno) }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[..<n])
            offset += off_t(n)
        }
        let complete = (bytes.lastIndex(of: 0x0A).map { $0 + 1 }) ?? 0
        if complete < bytes.count { ftruncate(fd, off_t(complete)) }
        for line in bytes[..<complete].split(separator: 0x0A) {
            apply(String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init))
        }
    }

    private mutating func apply(_ fields: [String]) {
        switch (fields.first, fields.count) {
        case ("O", 4):
            if let started = Int64(fields[2]) {
                open = OpenFile(relative: fields[1], started: started, headerKey: fields[3], latestSegment: started)
                pendingSeal = nil
            }
        case ("A", 4):
            guard var file = open, let end = Int64(fields[2]), let started = Int64(fields[3]) else { return }
            file.committed = end
            file.latestSegment = max(file.latestSegment, started)
            if file.firstDigest == nil { file.firstDigest = fields[1] }
            open = file
            digests[fields[1]] = file.relative
        case ("S", 2):
            guard let file = open else { return }
            for (digest, relative) in digests where relative == file.relative { digests[digest] = fields[1] }
            pendingSeal = fields[1] == "-" ? nil : (file.relative, fields[1])
            open = nil
        case ("D", 3):
            digests[fields[1]] = fields[2]
        case ("C", 3):
            storedBy[fields[2]] = fields[1]
        default:
            break
        }
    }

    /// Appends one line and `fsync`s it, updating the state as a replay would.
    mutating func record(_ fields: [String], countedBy instance: String? = nil) throws(JournalError) {
        var text = fields.joined(separator: " ") + "\n"
        if let instance, fields.count > 1 { text = "C \(instance) \(fields[1])\n" + text }
        let line = Array(text.utf8)
        let end = lseek(fd, 0, SEEK_END)
        guard end >= 0 else { throw JournalError(code: errno) }
        var written = 0
        while written < line.count {
            let n = line.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, line.count - written, end + off_t(written)) }
            if n < 0 { if errno == EINTR { continue }; throw JournalError(code: errno) }
            written += n
        }
        guard fsync(fd) == 0 else { throw JournalError(code: errno) }
        if let instance, fields.count > 1 { apply(["C", instance, fields[1]]) }
        apply(fields)
    }

    /// Finishes a seal that a crash interrupted between recording it and renaming the file.
    mutating func replayPendingSeal(root: String) {
        guard let (from, to) = pendingSeal else { return }
        if access(root + "/" + from, F_OK) == 0, access(root + "/" + to, F_OK) != 0 {
            chmod(root + "/" + from, 0o440)
            rename(root + "/" + from, root + "/" + to)
        }
        pendingSeal = nil
    }
}

/// A failed system call on a journal: its `errno`.
struct JournalError: Error {
    var code: Int32
}
