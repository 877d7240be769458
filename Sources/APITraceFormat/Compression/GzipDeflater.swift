import CZlib

/// Writes a gzip stream through zlib's C API (`deflateInit2` with a gzip wrapper).
///
/// Not thread-safe: one writer thread owns it.
/// The fuzz targets (Fuzz/, a package of their own, which cannot see `package` declarations) reach
/// it through ``FuzzingSupport``.
package final class GzipDeflater {
    /// How much of the pending input must become decodable output.
    package enum Flush {
        /// Let zlib buffer as it likes (best ratio).
        case none
        /// Make everything so far decodable without ending the stream (`Z_SYNC_FLUSH`).
        case sync
        /// End the gzip member with its trailer (`Z_FINISH`).
        case finish

        var zlibValue: Int32 {
            switch self {
            case .none: Z_NO_FLUSH
            case .sync: Z_SYNC_FLUSH
            case .finish: Z_FINISH
            }
        }
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    /// Bytes of input given so far.
    package private(set) var totalIn: Int = 0
    /// Bytes of gzip output produced so far.
    package private(set) var totalOut: Int = 0

    /// Starts a gzip member at a compression level from 0 (store) to 9 (smallest).
    package init(level: Int32) throws(GzipError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = apitrace_deflateInit2(stream, max(0, min(9, level)), 15 + 16, 8)
        guard status == Z_OK else {
            stream.deallocate()
            throw GzipError(kind: .initialization, offset: 0, zlibStatus: status)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses `input` and appends the compressed bytes produced to `output`.
    package func compress(_ input: UnsafeRawBufferPointer, flush: Flush, into output: inout [UInt8]) {
        totalIn += input.count
        let inBase = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.next_in = inBase
        stream.pointee.avail_in = uInt(input.count)
        let mode = flush.zlibValue
        repeat {
            let produced: Int = chunk.withUnsafeMutableBytes { buffer in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(buffer.count)
                _ = deflate(stream, mode)
                return buffer.count - Int(stream.pointee.avail_out)
            }
            output.append(contentsOf: chunk[0..<produced])
            totalOut += produced
            // Done when zlib had room to spare: all input consumed and the flush completed.
            if stream.pointee.avail_out != 0 { break }
        } while true
        stream.pointee.next_in = nil
    }

    /// Compresses a whole buffer into one finished gzip member.
    package static func compress(_ input: [UInt8], level: Int32 = 6) throws(GzipError) -> [UInt8] {
        let deflater = try GzipDeflater(level: level)
        var output: [UInt8] = []
        input.withUnsafeBytes { deflater.compress($0, flush: .finish, into: &output) }
        return output
    }
}
