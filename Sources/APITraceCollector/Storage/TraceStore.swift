import APITraceFormat
import Foundation

/// Stores validated uploads atomically under `dt=YYYY-MM-DD/` with names derived from their content.
///
/// A file is written to a hidden temporary file (`.upload-*`) in its day folder, `fsync`ed,
/// linked to its final name and the folder `fsync`ed: readers never see a half-written file,
/// and a crash leaves at most a hidden temporary file, removed when the store next opens.
/// The final name is `<started, basic ISO 8601>-<producer>-<first 16 hex digits of SHA-256>.jsonl.gz`,
/// so the same content always gets the same name: sending it again is answered "already stored"
/// and two concurrent uploads of it store it once (`link` fails with `EEXIST` for the second).
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

    /// The name a file with this header and content digest is stored under, relative to the root.
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

    /// True when a file is already stored under `relative`.
    func contains(_ relative: String) -> Bool {
        access(directory + "/" + relative, F_OK) == 0
    }

    /// Stores `body` under `relative` (from ``relativePath(header:sha256Hex:)``).
    func store(_ body: UnsafeRawBufferPointer, relative: String) throws(UploadRejection) -> Outcome {
        let finalPath = directory + "/" + relative
        let folder = String(finalPath[..<finalPath.lastIndex(of: "/")!])
        if access(finalPath, F_OK) == 0 { return .alreadyStored(relative) }
        if mkdir(folder, 0o755) == 0 {
            syncDirectory(directory)
        } else if errno != EEXIST {
            throw Self.failure("cannot create \(folder)")
        }
        let temporary = folder + "/" + Self.temporaryPrefix + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
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

    private static func failure(_ what: String) -> UploadRejection {
        let code = errno
        let text = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return UploadRejection(.diskFull, "the collector's disk is full (\(what): \(text)); retry later")
        }
        return UploadRejection(.storageFailed, "the collector could not store the file (\(what): \(text)); retry later")
    }

    private func syncDirectory(_ path: String) {
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
