#if canImport(Darwin)
package import Darwin
#elseif canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
package import Musl
#endif

/// The one way apitrace writes a file: the alert state and count cache, report cache packs, the
/// export state, `--output`, a salvaged trace file.
///
/// A temporary file is created in the target's folder, exclusively and without following links
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`, a fresh random name), written fully, `fsync`ed, and renamed
/// over the target, so readers see the old file or the new one, never half of one; a symbolic
/// link planted at the temporary name makes creation fail instead of writing through it, and a
/// link at the target is replaced, not followed. Every failure names the file and the reason.
///
/// ```swift
/// try AtomicFileWriter.write(Array(json.utf8), to: "state.json")
/// ```
///
/// One thread at a time writes, commits or discards; writers that place data at offsets may
/// `pwrite` to ``descriptor`` from several threads before committing.
package final class AtomicFileWriter: @unchecked Sendable {
    /// A write that failed; the target is unchanged.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file that was to be written.
        package var path: String
        /// The system's reason.
        package var reason: String
        /// The `errno` met (`ENOSPC` on a full disk).
        package var code: Int32

        /// True when the disk or the user's quota is full.
        package var isNoSpace: Bool { code == ENOSPC || code == EDQUOT }

        /// The failure as one line, naming the file.
        package var description: String { "cannot write \(FileSystemPath.display(path)): \(reason)" }
    }

    /// The file written.
    package let path: String
    /// The temporary file being written.
    package let temporaryPath: String
    /// The temporary file's descriptor, for writers that write at offsets (`pwrite`).
    package private(set) var descriptor: Int32
    private var failure: Failure?

    /// Prefix and suffix of every temporary name: `.<target name>.<random>.tmp`, hidden, so trace
    /// discovery and cache listing never take it for a finished file.
    package static func temporaryName(for target: String) -> String {
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return "." + lastComponent(of: target) + "." + random + ".tmp"
    }

    /// True when `name` (a folder entry) is one of the temporary files of targets named `<anything><suffix>`.
    package static func isTemporary(_ name: String, ofTargetsEndingIn suffix: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(suffix + ".")
    }

    /// Creates the temporary file for `path`, readable and writable as `permissions` allow (less the umask).
    package init(path: String, permissions: mode_t = 0o600) throws(Failure) {
        self.path = path
        let folder = Self.folder(of: path)
        var fd: Int32 = -1
        var temporary = ""
        var attempts = 0
        repeat {
            temporary = folder + "/" + Self.temporaryName(for: path)
            fd = FileSystemPath.withBytes(of: temporary) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions) }
            attempts += 1
        } while fd < 0 && (errno == EEXIST || errno == EINTR) && attempts < 16
        guard fd >= 0 else {
            let code = errno
            throw Failure(path: path, reason: "cannot create a temporary file in \(FileSystemPath.display(folder)): \(String(cString: strerror(code)))", code: code)
        }
        temporaryPath = temporary
        descriptor = fd
    }

    deinit { discard() }

    /// Appends `bytes` at the end of what was written.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        guard failure == nil, descriptor >= 0 else { throw failure ?? Failure(path: path, reason: "already finished", code: EBADF) }
        var done = 0
        while done < bytes.count {
            let n = posixWrite(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                let failed = Failure(path: path, reason: String(cString: strerror(code)), code: code)
                failure = failed
                throw failed
            }
            done += n
        }
    }

    /// Flushes the temporary file to disk and renames it over the target; on failure the
    /// temporary file is removed and the target is left as it was.
    package func commit() throws(Failure) {
        guard descriptor >= 0 else { throw failure ?? Failure(path: path, reason: "already finished", code: EBADF) }
        if let failure {
            discard()
            throw failure
        }
        let fd = descriptor
        descriptor = -1
        var code: Int32 = 0
        if fsync(fd) != 0 { code = errno }
        // close reports the write errors of some file systems (NFS) that fsync did not.
        if close(fd) != 0, code == 0, errno != EINTR { code = errno }
        if code == 0 {
            let renamed = FileSystemPath.withBytes(of: temporaryPath) { from in
                FileSystemPath.withBytes(of: path) { to in rename(from, to) }
            }
            if renamed == 0 {
                syncFolder()
                return
            }
            code = errno
        }
        unlinkTemporary()
        let failed = Failure(path: path, reason: String(cString: strerror(code)), code: code)
        failure = failed
        throw failed
    }

    /// Removes the temporary file; the target is left as it was.
    package func discard() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        unlinkTemporary()
    }

    /// Writes `bytes` to `path` in one go: create, write, `fsync`, rename.
    package static func write(_ bytes: some Collection<UInt8>, to path: String, permissions: mode_t = 0o600) throws(Failure) {
        let writer = try AtomicFileWriter(path: path, permissions: permissions)
        let array = Array(bytes)
        if let failed = array.withUnsafeBytes({ raw -> Failure? in
            do { try writer.write(raw) } catch let error as Failure { return error } catch { return nil }
            return nil
        }) {
            writer.discard()
            throw failed
        }
        try writer.commit()
    }

    private func unlinkTemporary() {
        _ = FileSystemPath.withBytes(of: temporaryPath) { unlink($0) }
    }

    /// Makes the rename itself durable; a folder that cannot be opened is left to the system.
    private func syncFolder() {
        let fd = FileSystemPath.withBytes(of: Self.folder(of: path)) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    private static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
