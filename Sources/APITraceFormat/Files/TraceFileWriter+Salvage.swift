import Foundation

extension TraceFileWriter {
    /// What finishing a cut trace file kept and dropped.
    package struct Salvage: Sendable, Equatable {
        /// A complete gzip file holding every complete line of the input, or `nil` when the input was already complete.
        package var finished: [UInt8]?
        /// Complete lines kept (the header included).
        package var keptLines: Int
        /// Decompressed bytes of an incomplete last line, dropped.
        package var droppedBytes: Int
        /// Offset in the compressed input where its gzip data stops, when it was cut.
        package var cutAt: Int?

        /// True when the input was not a complete gzip file and `finished` replaces it.
        package var wasCut: Bool { finished != nil }
    }

    /// Why a cut file cannot be finished: it is not gzip, or damaged before its end (not merely cut).
    package struct SalvageError: Error, Sendable, Equatable {
        /// The zlib error met.
        package var gzip: GzipError
    }

    /// Turns the readable prefix of a trace file cut at a flush point (what SIGKILL, a crash or a
    /// jetsam kill leaves) into a complete gzip file of its complete lines.
    ///
    /// A complete input gives `finished == nil`: nothing to do. A cut input gives the complete
    /// lines before the cut, recompressed and ended with a gzip trailer, so every gzip reader
    /// (`gzip -dc`, DuckDB, ClickHouse) reads it. Damage before the end (corrupt data, not a cut)
    /// throws: that is not a file of a killed writer, and guessing would invent data.
    package static func salvage(_ input: UnsafeRawBufferPointer, compressionLevel: Int32 = 5) throws(SalvageError) -> Salvage {
        var lines = 0
        var carry: [UInt8] = []
        var plain: [UInt8] = []
        var output: [UInt8] = []
        let deflater: GzipDeflater
        let inflater: GzipInflater
        do {
            deflater = try GzipDeflater(level: compressionLevel)
            inflater = try GzipInflater()
        } catch {
            throw SalvageError(gzip: error)
        }
        // Complete lines go on to the deflater as they come; an incomplete tail waits in `carry`.
        func take(_ chunk: UnsafeRawBufferPointer) {
            guard let last = chunk.lastIndex(of: 0x0A) else {
                carry.append(contentsOf: chunk)
                return
            }
            plain.removeAll(keepingCapacity: true)
            plain.append(contentsOf: carry)
            plain.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[...last]))
            carry.removeAll(keepingCapacity: true)
            carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[(last + 1)...]))
            lines += plain.withUnsafeBytes { Self.newlines(in: $0) }
            plain.withUnsafeBytes { deflater.compress($0, flush: .none, into: &output) }
        }
        do {
            try inflater.inflate(input, into: take)
        } catch let error as GzipError {
            throw SalvageError(gzip: error)
        } catch {
            throw SalvageError(gzip: GzipError(kind: .corrupt, offset: inflater.compressedOffset))
        }
        do throws(GzipError) {
            try inflater.finish()
            return Salvage(finished: nil, keptLines: lines + (carry.isEmpty ? 0 : 1), droppedBytes: 0, cutAt: nil)
        } catch {
            guard input.count > 0 else { throw SalvageError(gzip: error) }
            deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish, into: &output)
            return Salvage(finished: output, keptLines: lines, droppedBytes: carry.count, cutAt: error.offset)
        }
    }

    /// What ``finishLeftover(path:compressionLevel:)`` found.
    package enum Leftover: Sendable, Equatable {
        /// The file is finished (read-only): nothing to do.
        case finished
        /// A writer holds the file's lock: it is being written, leave it alone.
        case locked
        /// The file was complete but still writable (an older writer, another producer); it is now read-only.
        case complete
        /// The file was cut; its complete lines replaced it, as a complete, read-only file.
        case salvaged(Salvage)
        /// The file was cut before its header was complete, so nothing could be kept; it was deleted.
        case deleted
        /// The file cannot be read or finished; the reason says why. It is left as it is.
        case failed(String)
    }

    /// Finishes a trace file that no writer holds any more: the file of a killed app.
    ///
    /// The writer keeps an exclusive `flock` on the file it writes and makes every file read-only
    /// when it finishes it, so a writable file that nobody holds was cut: SIGKILL, a crash or a
    /// jetsam kill stopped its writer. Its complete lines replace it (through a temporary file and
    /// `rename`), read-only. The writer calls this at start for the files a previous run left; the
    /// uploader calls it before reading a writable file, under the same lock, so one of them
    /// finishes the file once and no cut copy is ever sent beside the finished one.
    package static func finishLeftover(path: String, compressionLevel: Int32 = 5) -> Leftover {
        var info = stat()
        guard FileSystemPath.withBytes(of: path, { lstat($0, &info) }) == 0 else {
            return .failed("cannot read \(FileSystemPath.display(path)): \(String(cString: strerror(errno)))")
        }
        if (info.st_mode & S_IFMT) == S_IFREG, info.st_mode & 0o222 == 0 { return .finished }
        // Not blocking on a FIFO, not following a link: anything but a regular file is left alone.
        let fd: Int32
        switch RegularFile.open(path) {
        case .success(let opened): fd = opened
        case .failure(let refusal): return .failed("cannot finish \(refusal)")
        }
        defer { Foundation.close(fd) }
        // The live writer holds an exclusive lock on its file for as long as it writes it.
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return .locked }
        defer { flock(fd, LOCK_UN) }
        // Finished meanwhile by someone who held the lock before us.
        guard fstat(fd, &info) == 0, info.st_mode & 0o222 != 0, FileSystemPath.withBytes(of: path, { stat($0, &info) }) == 0, info.st_mode & 0o222 != 0 else {
            return .finished
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        bytes.removeSubrange(offset...)
        let salvage: Salvage
        do {
            salvage = try bytes.withUnsafeBytes { try Self.salvage($0, compressionLevel: compressionLevel) }
        } catch let error as SalvageError {
            return .failed("\(path) is damaged, not merely cut: \(error.gzip)")
        } catch {
            return .failed("\(path) cannot be read: \(error)")
        }
        guard let finished = salvage.finished else {
            fchmod(fd, 0o400)
            return .complete
        }
        if salvage.keptLines == 0 {
            _ = FileSystemPath.withBytes(of: path) { unlink($0) }
            return .deleted
        }
        do {
            try AtomicFileWriter.write(finished, to: path, permissions: 0o400)
        } catch {
            return .failed("cannot finish \(FileSystemPath.display(path)): \(error.reason)")
        }
        return .salvaged(salvage)
    }

    /// Prefix of the temporary files older versions of ``finishLeftover(path:compressionLevel:)``
    /// wrote (it now writes through ``AtomicFileWriter``), still cleaned up.
    package static let salvagePrefix = ".salvage-"
}

extension TraceFileWriter {
    /// The newlines in `bytes`, found with `memchr` (a per-byte closure costs a debug build minutes
    /// on the collector's larger salvaged bodies).
    static func newlines(in bytes: UnsafeRawBufferPointer) -> Int {
        guard var cursor = bytes.baseAddress else { return 0 }
        let end = cursor + bytes.count
        var count = 0
        while cursor < end, let hit = memchr(cursor, 0x0A, end - cursor) {
            count += 1
            cursor = UnsafeRawPointer(hit) + 1
        }
        return count
    }
}
