import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A run of lines in time order, written to a temporary file so that sorting (``PendingLines``) holds a bounded
/// amount of memory whatever the overlap of its files; read back one line at a time while merging.
///
/// The file is unlinked as soon as it is made: it takes no name in the folder, and it is gone when
/// the process ends, however it ends. Each line is stored as its time, its sequence number (the
/// order it was read in, which breaks ties) and its bytes.
final class SpilledLineRun {
    private let fd: Int32
    private let directory: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var end = 0
    private var exhausted = false
    /// The line under the read cursor: its time, sequence and bytes' range in the buffer.
    private(set) var head: (time: Int64, sequence: Int, range: Range<Int>)?

    private static let entryHeader = 20

    /// Makes an empty run in `directory`.
    init(directory: String) throws(SortSpillError) {
        self.directory = directory
        var template = Array((directory + "/apitrace-sort-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SortSpillError(directory: directory, errno: errno) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends lines, in time order, to a run being written.
    func write(_ lines: some Sequence<(time: Int64, sequence: Int, bytes: UnsafeRawBufferPointer)>) throws(SortSpillError) {
        var out: [UInt8] = []
        out.reserveCapacity(256 << 10)
        for line in lines {
            withUnsafeBytes(of: line.time.littleEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: Int64(line.sequence).littleEndian) { out.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(line.bytes.count).littleEndian) { out.append(contentsOf: $0) }
            out.append(contentsOf: line.bytes)
            if out.count >= 256 << 10 { try writeAll(out); out.removeAll(keepingCapacity: true) }
        }
        try writeAll(out)
    }

    private func writeAll(_ bytes: [UInt8]) throws(SortSpillError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SortSpillError(directory: directory, errno: errno)
            }
            offset += n
        }
    }

    /// Ends writing and loads the first line.
    func startReading() throws(SortSpillError) {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw SortSpillError(directory: directory, errno: errno) }
        buffer = [UInt8](repeating: 0, count: 64 << 10)
        try advance()
    }

    /// The bytes of the line under the cursor (valid until ``advance()``).
    func withHeadBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[head!.range])) }
    }

    /// Moves the cursor to the next line; `head` is nil at the end of the run.
    func advance() throws(SortSpillError) {
        if let head { start = head.range.upperBound }
        head = nil
        guard try fill(Self.entryHeader) else { return }
        let (time, sequence, count) = buffer.withUnsafeBytes { b in
            (Int64(littleEndian: b.loadUnaligned(fromByteOffset: start, as: Int64.self)),
             Int(Int64(littleEndian: b.loadUnaligned(fromByteOffset: start + 8, as: Int64.self))),
             Int(UInt32(littleEndian: b.loadUnaligned(fromByteOffset: start + 16, as: UInt32.self))))
        }
        guard try fill(Self.entryHeader + count) else {
            throw SortSpillError(directory: directory, reason: "a spilled run ends mid-line")
        }
        head = (time, sequence, (start + Self.entryHeader)..<(start + Self.entryHeader + count))
    }

    /// Makes `count` unread bytes available from `start`; false at the end of the file.
    private func fill(_ count: Int) throws(SortSpillError) -> Bool {
        while end - start < count {
            if exhausted { return false }
            if start > 0 {
                buffer.withUnsafeMutableBytes { b in
                    _ = memmove(b.baseAddress!, b.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            }
            if buffer.count < count { buffer += [UInt8](repeating: 0, count: count - buffer.count) }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + end, $0.count - end) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SortSpillError(directory: directory, errno: errno)
            }
            if n == 0 { exhausted = true } else { end += n }
        }
        return true
    }
}

/// `cat --sort` or the HAR export could not hold back lines in the temporary folder (full, read-only, missing).
package struct SortSpillError: Error, Sendable, CustomStringConvertible {
    /// The folder the temporary runs went to.
    package var directory: String
    /// What went wrong.
    package var reason: String

    init(directory: String, errno code: Int32) {
        self.directory = directory
        self.reason = String(cString: strerror(code))
    }

    init(directory: String, reason: String) {
        self.directory = directory
        self.reason = reason
    }

    package var description: String {
        "cannot hold lines for sorting in \(directory) (\(reason)); set TMPDIR to a folder with room"
    }
}
