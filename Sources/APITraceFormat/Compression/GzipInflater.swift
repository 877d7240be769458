import CZlib

/// Reads a gzip stream (one member or several concatenated) through zlib's C API, in chunks.
///
/// Feed compressed bytes with ``inflate(_:into:)`` as they are read; call ``finish()`` at the end
/// of the input to learn whether the stream was complete. Not thread-safe.
package final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var chunk = [UInt8](repeating: 0, count: 256 * 1024)
    /// Compressed bytes consumed so far.
    package private(set) var compressedOffset: Int = 0
    /// True between members: the last member ended and no byte of another has been read.
    package private(set) var isAtMemberBoundary = true

    /// Prepares to read gzip data.
    package init() throws(GzipError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = apitrace_inflateInit2(stream, 15 + 16)
        guard status == Z_OK else {
            stream.deallocate()
            throw GzipError(kind: .initialization, offset: 0, zlibStatus: status)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Inflates `input`, handing each block of decompressed bytes to `sink` as it is produced.
    ///
    /// Throws ``GzipError`` with kind `.corrupt` and the offset of the damage; everything before
    /// it has already been handed to `sink`.
    package func inflate(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard input.count > 0 else { return }
        var remaining = input
        while remaining.count > 0 {
            if isAtMemberBoundary {
                // Only another gzip member may follow a finished one.
                if remaining[0] != 0x1F || (remaining.count > 1 && remaining[1] != 0x8B) {
                    throw GzipError(kind: .corrupt, offset: compressedOffset, zlibMessage: "not gzip data")
                }
                isAtMemberBoundary = false
            }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: remaining.baseAddress!.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(remaining.count)
            var status: Int32 = Z_OK
            repeat {
                let produced: Int = chunk.withUnsafeMutableBytes { buffer in
                    stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(buffer.count)
                    status = CZlib.inflate(stream, Z_NO_FLUSH)
                    return buffer.count - Int(stream.pointee.avail_out)
                }
                let consumed = remaining.count - Int(stream.pointee.avail_in)
                if produced > 0 {
                    try chunk.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
                }
                if status == Z_STREAM_END {
                    compressedOffset += consumed
                    remaining = UnsafeRawBufferPointer(rebasing: remaining[consumed...])
                    inflateReset(stream)
                    isAtMemberBoundary = true
                    break
                }
                if status != Z_OK && status != Z_BUF_ERROR {
                    let message = stream.pointee.msg.map { String(cString: $0) }
                    throw GzipError(kind: .corrupt, offset: compressedOffset + consumed, zlibStatus: status, zlibMessage: message)
                }
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 {
                    compressedOffset += consumed
                    remaining = UnsafeRawBufferPointer(rebasing: remaining[remaining.count...])
                    break
                }
                if status == Z_BUF_ERROR && produced == 0 {
                    compressedOffset += consumed
                    remaining = UnsafeRawBufferPointer(rebasing: remaining[consumed...])
                    break
                }
            } while true
        }
        stream.pointee.next_in = nil
    }

    /// Ends reading: throws a `.truncated` error when the input stopped inside a gzip member.
    package func finish() throws(GzipError) {
        if !isAtMemberBoundary {
            throw GzipError(kind: .truncated, offset: compressedOffset)
        }
    }
}
