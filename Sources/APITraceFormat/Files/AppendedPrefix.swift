#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How far a reader got in a file that grows by appended gzip members (a collector's open file,
/// ``TraceFileIdentity/Kind/open``): the byte offset of a member boundary, and fingerprints of
/// the bytes before it, so what was read up to there can be kept and only the members appended
/// since are inflated at the next run.
///
/// The fingerprints are of the first and the last ``sampleBytes`` bytes before ``offset`` (the last
/// member's gzip trailer, its CRC-32 and length, among them): a file cut back below the offset, or
/// rewritten under the same name, no longer matches, and is read again from its start.
package struct AppendedPrefix: Sendable, Equatable {
    /// Bytes read: the end of the last complete gzip member.
    package var offset: Int64
    /// FNV-1a of the first bytes of the file (up to ``sampleBytes``, never past ``offset``).
    package var headHash: UInt64
    /// FNV-1a of the last bytes before ``offset`` (up to ``sampleBytes``).
    package var tailHash: UInt64

    package init(offset: Int64, headHash: UInt64, tailHash: UInt64) {
        self.offset = offset
        self.headHash = headHash
        self.tailHash = tailHash
    }

    /// Bytes fingerprinted at each end of the prefix.
    package static let sampleBytes = 4096

    /// The prefix of `path` up to `offset` as the file holds it now; nil when the file cannot be
    /// read or is shorter than `offset`.
    package init?(path: String, offset: Int64) {
        guard offset > 0, case .success(let fd) = RegularFile.open(path) else { return nil }
        defer { close(fd) }
        let count = Int(min(Int64(Self.sampleBytes), offset))
        var buffer = [UInt8](repeating: 0, count: count)
        func hash(at start: Int64) -> UInt64? {
            var done = 0
            while done < count {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(start) + off_t(done)) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return nil }
                done += n
            }
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in buffer { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return h
        }
        guard let head = hash(at: 0), let tail = hash(at: offset - Int64(count)) else { return nil }
        self.init(offset: offset, headHash: head, tailHash: tail)
    }
}
