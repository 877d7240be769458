#if canImport(Darwin)
package import Darwin
#elseif canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
package import Musl
#endif

/// The one way apitrace opens a file it reads: trace files, report cache packs, the alert state
/// and count cache, the export state, rules files.
///
/// A plain `open` of a FIFO blocks until a writer comes (for ever, under cron), and a link to
/// `/dev/zero` reads without end. Here the file is opened without blocking and without following
/// a link in its last component, and anything that is not a regular file is refused with a reason
/// naming what it is, so a reader skips it with a warning instead of hanging:
///
/// ```swift
/// switch RegularFile.open("traces/x.jsonl.gz") {
/// case .success(let fd): defer { close(fd) } ...
/// case .failure(let refusal): print(refusal)   // "traces/x.jsonl.gz is a FIFO, not a regular file; skipped"
/// }
/// ```
package enum RegularFile {
    /// Why a file was not opened.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The path.
        package var path: String
        /// What the path is, or the system's reason.
        package var reason: String
        /// True when the path does not exist.
        package var isMissing = false
        /// True when the path is a link, FIFO, socket, device or folder: it will not become readable by waiting.
        package var isNotRegularFile = false

        /// The refusal as one line, naming the file.
        package var description: String { "\(FileSystemPath.display(path)): \(reason)" }
    }

    /// Opens `path` for reading: without blocking, without following a link, and only when it is
    /// a regular file. The descriptor is blocking again (for a regular file that changes nothing)
    /// and closed on exec; the caller closes it.
    package static func open(_ path: String) -> Result<Int32, Refusal> {
        var fd: Int32
        repeat {
            fd = FileSystemPath.withBytes(of: path) { systemOpen($0, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) }
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP || code == EMLINK {
                return .failure(Refusal(path: path, reason: "is a symbolic link, which apitrace does not follow here; name the file it points to", isNotRegularFile: true))
            }
            // A socket cannot be opened at all (ENXIO): say what it is rather than the system's word.
            if code != ENOENT, let refusal = check(path), refusal.isNotRegularFile { return .failure(refusal) }
            return .failure(Refusal(path: path, reason: String(cString: strerror(code)), isMissing: code == ENOENT))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            return .failure(Refusal(path: path, reason: reason))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return .failure(Refusal(path: path, reason: "is \(kind(of: info.st_mode)), not a regular file; skipped", isNotRegularFile: true))
        }
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        return .success(fd)
    }

    /// Opens (creating it, mode 0600) a lock file for `flock`: not through a link planted at its
    /// name, which would create a file wherever the link points, and only a regular file.
    package static func openLock(_ path: String) -> Result<Int32, Refusal> {
        var fd: Int32
        repeat {
            fd = FileSystemPath.withBytes(of: path) { systemOpen($0, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP || code == EMLINK {
                return .failure(Refusal(path: path, reason: "is a symbolic link, which apitrace does not follow here", isNotRegularFile: true))
            }
            return .failure(Refusal(path: path, reason: String(cString: strerror(code))))
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return .failure(Refusal(path: path, reason: "is \(kind(of: info.st_mode)), not a regular file", isNotRegularFile: true))
        }
        return .success(fd)
    }

    /// The whole content of a regular file of at most `limit` bytes; nil content when it does not exist.
    ///
    /// A file larger than `limit` is refused, not cut: a state or cache is either whole or damaged.
    package static func read(_ path: String, limit: Int) -> Result<[UInt8]?, Refusal> {
        let fd: Int32
        switch open(path) {
        case .success(let opened): fd = opened
        case .failure(let refusal): return refusal.isMissing ? .success(nil) : .failure(refusal)
        }
        defer { close(fd) }
        // Read straight into one buffer the size the file has now (it may still grow or shrink
        // while read, and procfs says 0): no chunk copied in and, for a cache of a few hundred
        // kilobytes, no buffer grown by doubling (each doubling a fresh mapping to fault in).
        var info = stat()
        let expected = fstat(fd, &info) == 0 ? max(0, Int(info.st_size)) : 0
        let tooLarge = Result<[UInt8]?, Refusal>.failure(Refusal(path: path, reason: "is larger than \(limit) bytes; refused"))
        // Already larger: refused before a byte is read or a buffer the size of the limit is made.
        guard expected <= limit else { return tooLarge }
        var bytes = [UInt8](repeating: 0, count: expected + 1)
        var count = 0
        while true {
            // Full but not past the limit (checked after every read): room for up to the limit plus
            // one byte, that one byte telling a file over the limit from one exactly at it.
            if count == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(max(count, 64 * 1024), limit - count) + 1))
            }
            let n = bytes.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(Refusal(path: path, reason: String(cString: strerror(errno))))
            }
            if n == 0 { break }
            count += n
            guard count <= limit else { return tooLarge }
        }
        bytes.removeLast(bytes.count - count)
        return .success(bytes)
    }

    /// The kind of a file that is not regular, for a message.
    package static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a folder"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    /// Whether `path` is a regular file, without following a link: what discovery asks of a name.
    /// Returns the refusal naming what it is otherwise.
    package static func check(_ path: String) -> Refusal? {
        var info = stat()
        let status = FileSystemPath.withBytes(of: path) { lstat($0, &info) }
        guard status == 0 else { return Refusal(path: path, reason: String(cString: strerror(errno)), isMissing: errno == ENOENT) }
        if (info.st_mode & S_IFMT) == S_IFLNK {
            return Refusal(path: path, reason: "is a symbolic link, which apitrace does not follow here; name the file it points to", isNotRegularFile: true)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return Refusal(path: path, reason: "is \(kind(of: info.st_mode)), not a regular file; skipped", isNotRegularFile: true) }
        return nil
    }
}

private func systemOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { open(path, flags, mode) }
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
