package import APITraceFormat
import Dispatch
import Foundation

/// Copies the valid event lines of trace files to an output, as they are in the files, in file
/// order: the engine of `apitrace cat`.
///
/// Every line is scanned and validated by the reading layer (``TraceFileReader/forEachRecordLine(header:_:)``):
/// invalid lines are skipped with a warning naming the file and line, and lines that pass are
/// written byte for byte, never decoded and encoded again. Files are read on several cores at
/// once; the output keeps file order, each reader holding at most ``bufferLimit`` bytes ahead of
/// the writer.
///
/// ```swift
/// let scans = TraceLineCopier(filter: .all).copy(files) { bytes in write(1, bytes.baseAddress, bytes.count) }
/// ```
package struct TraceLineCopier: Sendable {
    /// Lines printed.
    package var filter: TraceLineFilter
    /// Print each file's header line before its events.
    package var headers: Bool
    /// Files read at once.
    package var parallelism: Int
    /// Bytes a reader may hold ahead of the writer before it waits.
    package var bufferLimit = 16 << 20
    /// Size of the blocks handed to the writer.
    package var blockSize = 256 << 10

    package init(filter: TraceLineFilter, headers: Bool = true, parallelism: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.filter = filter
        self.headers = headers
        self.parallelism = parallelism
    }

    /// Copies the lines of `files` to `write`, called on the caller's thread, in file order; returns
    /// each file's scan (header, counts, warnings) in file order.
    package func copy(_ files: [String], to write: (UnsafeRawBufferPointer) -> Void) -> [TraceFileReader.RecordScan] {
        guard !files.isEmpty else { return [] }
        let queue = BlockQueue(files: files.count)
        let workers = max(1, min(parallelism, files.count))
        let me = self
        let group = DispatchGroup()
        for _ in 0..<workers {
            DispatchQueue.global().async(group: group) {
                while let index = queue.takeFile() {
                    let scan = me.copyOne(files[index], index: index, queue: queue)
                    queue.finish(index, scan)
                }
            }
        }
        var scans: [TraceFileReader.RecordScan] = []
        for index in files.indices {
            while true {
                let (blocks, scan) = queue.drain(index)
                for block in blocks { block.withUnsafeBytes(write) }
                if let scan { scans.append(scan); break }
            }
        }
        group.wait()
        return scans
    }

    private func copyOne(_ path: String, index: Int, queue: BlockQueue) -> TraceFileReader.RecordScan {
        var block: [UInt8] = []
        block.reserveCapacity(blockSize + 4096)
        let filter = filter, headers = headers, blockSize = blockSize, bufferLimit = bufferLimit
        let everything = filter.keepsEverything
        func append(_ line: UnsafeRawBufferPointer) {
            block.append(contentsOf: line)
            block.append(0x0A)
            if block.count >= blockSize {
                queue.push(block, to: index, limit: bufferLimit)
                block.removeAll(keepingCapacity: true)
            }
        }
        let scan = TraceFileReader(path: path).forEachRecordLine(header: { _, line in
            if headers { append(line) }
            return true
        }) { record, line, _ in
            if everything || filter.matches(record) { append(line) }
            return true
        }
        if !block.isEmpty { queue.push(block, to: index, limit: .max) }
        return scan
    }
}

/// Blocks of output per file, handed from the reading threads to the writer in file order.
private final class BlockQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var blocks: [[[UInt8]]]
    private var buffered: [Int]
    private var scans: [TraceFileReader.RecordScan?]
    private var nextFile = 0
    /// The file the writer is on; its reader never waits.
    private var writing = 0

    init(files: Int) {
        blocks = Array(repeating: [], count: files)
        buffered = Array(repeating: 0, count: files)
        scans = Array(repeating: nil, count: files)
    }

    func takeFile() -> Int? {
        condition.lock(); defer { condition.unlock() }
        guard nextFile < blocks.count else { return nil }
        nextFile += 1
        return nextFile - 1
    }

    /// Queues a block; waits while the file is ahead of the writer and holds `limit` bytes or more.
    func push(_ block: [UInt8], to index: Int, limit: Int) {
        condition.lock(); defer { condition.unlock() }
        while index != writing, buffered[index] >= limit { condition.wait() }
        blocks[index].append(block)
        buffered[index] += block.count
        condition.broadcast()
    }

    func finish(_ index: Int, _ scan: TraceFileReader.RecordScan) {
        condition.lock(); defer { condition.unlock() }
        scans[index] = scan
        condition.broadcast()
    }

    /// Waits for blocks of file `index` or its end; returns the blocks, and the scan once it ended.
    func drain(_ index: Int) -> ([[UInt8]], TraceFileReader.RecordScan?) {
        condition.lock(); defer { condition.unlock() }
        if writing != index { writing = index; condition.broadcast() }
        while blocks[index].isEmpty, scans[index] == nil { condition.wait() }
        let out = blocks[index]
        blocks[index] = []
        buffered[index] = 0
        condition.broadcast()
        return (out, out.isEmpty ? scans[index] : nil)
    }
}
