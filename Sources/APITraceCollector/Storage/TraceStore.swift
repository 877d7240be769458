import APITraceFormat
import Crypto
import Foundation

/// Stores validated uploads under `dt=YYYY-MM-DD/`, appending each producer's segments as gzip
/// members to one open file per producer that is sealed on a cadence (Docs/collection.md).
///
/// For each producer (`.producers/<producer>.journal`, ``ProducerJournal``, held under `flock`):
/// - a segment whose SHA-256 the journal holds is "already stored" (exactly once, across
///   collectors sharing the folder and across restarts);
/// - the first segment opens `dt=<day>/<start>-<producer>-open.jsonl.gz`; later segments are
///   appended to it (`pwrite` at the committed length, `fsync`, then the journal line), so a crash
///   mid-append is cut back to the last complete member by the next append;
/// - a segment starting in a later hour than the open file (in the producer's clock), or with a
///   different header (app version, host), or arriving when the open file has passed
///   ``sealBytes``, seals it: it is made read-only and renamed to
///   `<start>-<producer>-<the new segment's start>-<tag>.jsonl.gz`, whose name gives its events'
///   span (the writer's next file starts at or before any later segment, Docs/trace-format.md);
/// - a segment that starts before the open file (sent late) is stored as a file of its own,
///   sealed with the open file's start as its end; one whose header changed while it does not
///   start after every segment already in the open file is stored alone under
///   `<start>-<producer>-<16 hex of SHA-256>.jsonl.gz` (immutable, end unknown);
/// - ``sealIdle(olderThan:)`` seals open files no segment was appended to for a while under the
///   same digest form (their end is not known from names).
/// Files stored alone are written to a hidden temporary file, `fsync`ed and `link`ed to their
/// name, as every file was before appending; temporary files a crash left are removed at start.
struct TraceStore: Sendable {
    /// Root folder.
    let directory: String

    /// What storing did.
    enum Outcome: Equatable, Sendable {
        /// The file is new; stored at this path relative to the root.
        case stored(String)
        /// A file with the same content was already there.
        case alreadyStored(String)
    }

    static let temporaryPrefix = ".upload-"

    /// Opens the store, creating the folder and removing temporary files left by a crash.
    init(directory: String) throws(CollectorSetupError) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        do {
            try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        } catch {
            throw CollectorSetupError("cannot create the collector folder \(directory): \(error.localizedDescription)")
        }
        guard access(self.directory, W_OK) == 0 else {
            throw CollectorSetupError("cannot write to the collector folder \(directory): \(String(cString: strerror(errno)))")
        }
        sweepTemporaryFiles()
    }

    /// Compressed bytes past which an open file is sealed at its producer's next later segment.
    var sealBytes: Int64 = 64 << 20

    /// The name a segment stored alone with this header and content digest has, relative to the root
    /// (every segment's name before the collector appended).
    static func relativePath(header: TraceFileHeader, sha256Hex: String) -> String {
        let day = String(header.started.rfc3339.prefix(10))
        return "dt=\(day)/\(header.started.basicISO8601)-\(sanitize(producer: header.producer))-\(sha256Hex.prefix(16)).jsonl.gz"
    }

    /// Letters, digits and `_` only (at most 64), so a producer id can never reach outside its folder.
    static func sanitize(producer: String) -> String {
        let cleaned = producer.unicodeScalars.prefix(64).map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "_") ? Character(scalar) : "_"
        }
        return cleaned.isEmpty ? "unknown" : String(cleaned)
    }

    /// Stores `body` alone under `relative` (from ``relativePath(header:sha256Hex:)``), linked from a temporary file.
    func storeAlone(_ body: UnsafeRawBufferPointer, relative: String, permissions: mode_t = 0o440) throws(UploadRejection) -> Outcome {
        let finalPath = directory + "/" + relative
        let folder = String(finalPath[..<finalPath.lastIndex(of: "/")!])
        if access(finalPath, F_OK) == 0 { return .alreadyStored(relative) }
        try ensureFolder(of: relative)
        let temporary = try writeAside(body, in: folder, permissions: permissions)
        // link, unlike rename, refuses to replace: of two concurrent uploads of one file, one stores it.
        let linked = link(temporary, finalPath)
        let linkErrno = errno
        unlink(temporary)
        if linked != 0 {
            if linkErrno == EEXIST { return .alreadyStored(relative) }
            errno = linkErrno
            throw Self.failure("cannot link \(finalPath)")
        }
        syncDirectory(folder)
        return .stored(relative)
    }

    /// Writes `body` to a new hidden temporary file (`.upload-*`) in `folder` and `fsync`s it; returns
    /// its path. Nothing is left behind when it fails.
    func writeAside(_ body: UnsafeRawBufferPointer, in folder: String, permissions: mode_t) throws(UploadRejection) -> String {
        let temporary = folder + "/" + Self.temporaryPrefix + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard fd >= 0 else { throw Self.failure("cannot create a temporary file in \(folder)") }
        var offset = 0
        while offset < body.count {
            let n = write(fd, body.baseAddress! + offset, body.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                let error = Self.failure("cannot write \(temporary)")
                close(fd)
                unlink(temporary)
                throw error
            }
            offset += n
        }
        if fsync(fd) != 0 {
            let error = Self.failure("cannot fsync \(temporary)")
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        return temporary
    }

    static func failure(_ what: String) -> UploadRejection {
        let code = errno
        let text = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return UploadRejection(.diskFull, "the collector's disk is full (\(what): \(text)); retry later")
        }
        return UploadRejection(.storageFailed, "the collector could not store the file (\(what): \(text)); retry later")
    }

    func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Removes `.upload-*` files a killed collector left in the day folders.
    private func sweepTemporaryFiles() {
        guard let days = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for day in days where day.hasPrefix("dt=") {
            let folder = directory + "/" + day
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where name.hasPrefix(Self.temporaryPrefix) {
                unlink(folder + "/" + name)
            }
        }
    }
}
