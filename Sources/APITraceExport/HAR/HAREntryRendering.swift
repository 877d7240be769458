import APITraceFormat
import Dispatch
import Foundation

/// Renders the sorted requests of a HAR export into entry text on worker threads while the caller
/// keeps merging, and hands the text back in order: entries are most of an archive's bytes (about
/// four times the lines they come from), so writing them is as much work as reading the files.
///
/// Blocks of ``HAREntryRecord``s go out numbered; at most `threads` x 2 are out at once, and no more
/// than ``outstandingBytes`` of records (but always one), so memory stays bounded whatever the
/// records hold (a block is about 64 KiB of records, 500 KiB of text; a request of a 1 MiB line
/// renders to a few MiB).
final class HAREntryRendering: @unchecked Sendable {
    /// Records end to end, with each one's end offset.
    struct Block {
        var bytes: [UInt8] = []
        var ends: [Int] = []
    }

    static let blockSize = 64 << 10
    /// Bytes of records out (submitted, not yet written) at most, unless a single block is larger.
    static let outstandingBytes = 256 << 10

    private let threads: Int
    private let directory: String
    private let group = DispatchGroup()
    // Under `condition`.
    private let condition = NSCondition()
    private var rendered: [Int: [UInt8]?] = [:]
    /// Text buffers written out, emptied with their room kept: a block's text is larger than
    /// malloc maps fresh each time, so a new buffer per block would cost a page fault per 4 KiB.
    private var spare: [[UInt8]] = []
    // The caller's.
    private var submitted = 0
    private var written = 0
    private var sizes: [Int: Int] = [:]
    private var outstanding = 0

    /// Renders on up to `threads` threads; `directory` is where the records were held (named if one comes back damaged).
    init(threads: Int, directory: String) {
        self.threads = max(1, threads)
        self.directory = directory
    }

    /// Renders a block (its entries after those of every block before it), on a worker when there
    /// are several threads; then writes what is ready, in order, waiting while too many are out.
    /// Throws what `write` throws, and ``HARStream/DamagedEntry`` for a record that does not read back.
    func submit(_ block: Block, write: ([UInt8]) throws -> Void) throws {
        // Room first: what is out, with this block, stays within the bounds.
        try drain(keeping: threads * 2 - 1, bytes: Self.outstandingBytes - block.bytes.count, write: write)
        let index = submitted
        submitted += 1
        sizes[index] = block.bytes.count
        outstanding += block.bytes.count
        if threads == 1 {
            let text = Self.render(block, first: index == 0, into: takeSpare())
            condition.lock()
            rendered[index] = text
            condition.unlock()
        } else {
            DispatchQueue.global().async(group: group) { [self] in
                let text = Self.render(block, first: index == 0, into: takeSpare())
                condition.lock()
                rendered[index] = text
                condition.broadcast()
                condition.unlock()
            }
        }
        try drain(keeping: threads * 2 - 1, bytes: Self.outstandingBytes, write: write)
    }

    /// Writes every block submitted, in order.
    func finish(write: ([UInt8]) throws -> Void) throws {
        try drain(keeping: 0, bytes: 0, write: write)
    }

    /// Waits for workers still rendering (after a failure, so none outlives the export).
    func cancel() { group.wait() }

    /// Writes the blocks ready in order, waiting until at most `keeping` blocks and `bytes` bytes of records remain out.
    private func drain(keeping: Int, bytes: Int, write: ([UInt8]) throws -> Void) throws {
        while written < submitted {
            condition.lock()
            while rendered[written] == nil && (submitted - written > keeping || outstanding > bytes) { condition.wait() }
            let text = rendered.removeValue(forKey: written)
            condition.unlock()
            guard let text else { return }
            outstanding -= sizes.removeValue(forKey: written) ?? 0
            written += 1
            guard var text else {
                group.wait()
                throw HARStream.DamagedEntry(directory: directory)
            }
            try write(text)
            text.removeAll(keepingCapacity: true)
            condition.lock()
            if spare.count < threads, text.capacity <= 2 << 20 { spare.append(text) }
            condition.unlock()
        }
    }

    /// An emptied text buffer, or a new one.
    private func takeSpare() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return spare.popLast() ?? []
    }

    /// The entries of a block, each but the very first of the archive after a separator, in `buffer`; nil when a record is damaged.
    private static func render(_ block: Block, first: Bool, into buffer: [UInt8]) -> [UInt8]? {
        var out = JSONOutput(reusing: buffer)
        out.bytes.reserveCapacity(block.ends.count * 1280 + 4096)
        let ok = block.bytes.withUnsafeBytes { bytes -> Bool in
            var start = 0
            for (i, end) in block.ends.enumerated() {
                guard let record = HAREntryRecord.record(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) else { return false }
                if !(first && i == 0) { out.bytes.append(contentsOf: ",\n".utf8) }
                HAREntryWriter.append(record, to: &out)
                start = end
            }
            return true
        }
        return ok ? out.bytes : nil
    }
}
