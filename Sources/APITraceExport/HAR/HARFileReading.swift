import APITraceFormat
import Dispatch
import Foundation

/// Reads the files of a HAR export on several threads while one consumer takes their kept requests
/// in reading order (file after file, line after line), so the export's order and its tie-breaks
/// are those of one thread reading the files one after the other.
///
/// Each reading thread takes the next file, decompresses and scans it once, and sends its kept
/// requests (``HAREntryRecord``s) in blocks of about 64 KiB; the consumer takes the blocks of the
/// first unfinished file, then that file's outcome, then moves to the next. Memory stays bounded
/// whatever the files hold: a thread takes a file only within `threads` files of the one being
/// consumed, and waits while that file has ``queuedBytes`` or more not yet taken (one block is
/// always let through, so a file of lines near the 1 MiB limit still moves).
///
/// (``ParallelTraceReader`` returns each file's result at its end, which for a HAR export would be
/// every request of the file at once: this hands them over as they are read.)
final class HARFileReading: @unchecked Sendable {
    /// Kept requests of one file, in line order: their records end to end, with each one's start time and end offset.
    struct Block {
        var bytes: [UInt8] = []
        var entries: [(started: Int64, end: Int)] = []
    }

    /// What reading one file found.
    struct FileOutcome: Sendable {
        var isUsable: Bool
        var warnings: [TraceReadWarning]
    }

    /// Whether a request (scanned, and its line) is exported; called on the reading threads.
    typealias Keep = @Sendable (TraceRecord, UnsafeRawBufferPointer) -> Bool

    static let blockSize = 64 << 10
    /// Bytes of blocks waiting per file.
    static let queuedBytes = 256 << 10

    // All of the following under `condition`.
    private let condition = NSCondition()
    private let files: [String]
    private let window: Int
    private var nextToTake = 0
    private var consuming = 0
    private var blocks: [Int: [Block]] = [:]
    private var queued: [Int: Int] = [:]
    private var outcomes: [Int: FileOutcome] = [:]
    private var stopped = false

    private init(files: [String], window: Int) {
        self.files = files
        self.window = window
    }

    /// Reads `files` on up to `threads` threads and hands each kept request to `consume` in reading
    /// order, each file's outcome to `finished` after its last request; `consume` throwing stops
    /// the reading (the error is rethrown once the threads have ended).
    ///
    /// `keepFile` and `keep` are called on the reading threads, several at once when `threads` > 1;
    /// with one thread, one call at a time.
    static func read(
        _ files: [String], threads: Int,
        keepFile: @escaping @Sendable (TraceFileHeader) -> Bool,
        keep: @escaping Keep,
        consume: (Int64, UnsafeRawBufferPointer) throws(SortSpillError) -> Void,
        finished: (FileOutcome) -> Void
    ) throws(SortSpillError) {
        guard !files.isEmpty else { return }
        let workers = max(1, min(threads, files.count))
        let reading = HARFileReading(files: files, window: workers)
        let group = DispatchGroup()
        for _ in 0..<workers {
            DispatchQueue.global().async(group: group) {
                while let index = reading.take() {
                    reading.readFile(index, keepFile: keepFile, keep: keep)
                }
            }
        }
        var failure: SortSpillError?
        for index in files.indices {
            while let next = reading.receive(index) {
                switch next {
                case .block(let block):
                    guard failure == nil else { continue }
                    block.bytes.withUnsafeBytes { bytes in
                        var start = 0
                        for entry in block.entries {
                            do throws(SortSpillError) {
                                try consume(entry.started, UnsafeRawBufferPointer(rebasing: bytes[start..<entry.end]))
                            } catch {
                                failure = error
                                return
                            }
                            start = entry.end
                        }
                    }
                    if failure != nil { reading.stop() }
                case .finished(let outcome):
                    if failure == nil { finished(outcome) }
                }
            }
            if failure != nil { break }
        }
        reading.stop()
        group.wait()
        if let failure { throw failure }
    }

    /// The next file for a reading thread, once it is within the window; nil when there is none or reading stopped.
    private func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while !stopped && nextToTake < files.count && nextToTake >= consuming + window { condition.wait() }
        guard !stopped, nextToTake < files.count else { return nil }
        defer { nextToTake += 1 }
        return nextToTake
    }

    /// Reads file `index`, sending its kept requests in blocks, then its outcome.
    private func readFile(_ index: Int, keepFile: (TraceFileHeader) -> Bool, keep: Keep) {
        var block = Block()
        block.bytes.reserveCapacity(Self.blockSize + 4096)
        var keepFileLines = true
        var going = true
        let scan = TraceFileReader(path: files[index]).forEachRecordLine(header: { header, _ in
            keepFileLines = keepFile(header)
            return true
        }) { record, line, _ in
            guard keepFileLines, record.kind == .request, keep(record, line) else { return true }
            HAREntryRecord.append(record, to: &block.bytes)
            block.entries.append((HAREntryWriter.started(record), block.bytes.count))
            if block.bytes.count >= Self.blockSize {
                going = send(block, for: index)
                // A new block, not the sent one emptied: that would keep the room a 1 MiB line made.
                block = Block()
                block.bytes.reserveCapacity(Self.blockSize + 4096)
            }
            return going
        }
        if going, !block.entries.isEmpty { going = send(block, for: index) }
        condition.lock()
        outcomes[index] = FileOutcome(isUsable: scan.header != nil, warnings: scan.warnings)
        condition.broadcast()
        condition.unlock()
    }

    /// Queues a block of file `index`, waiting while that file has ``queuedBytes`` queued; false when reading stopped.
    private func send(_ block: Block, for index: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !stopped && queued[index, default: 0] > 0 && queued[index, default: 0] + block.bytes.count > Self.queuedBytes { condition.wait() }
        guard !stopped else { return false }
        blocks[index, default: []].append(block)
        queued[index, default: 0] += block.bytes.count
        condition.broadcast()
        return true
    }

    private enum Received {
        case block(Block)
        case finished(FileOutcome)
    }

    /// The next block of file `index` (the one being consumed), then its outcome, then nil.
    private func receive(_ index: Int) -> Received? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if var queued = blocks[index], !queued.isEmpty {
                let block = queued.removeFirst()
                blocks[index] = queued
                self.queued[index, default: 0] -= block.bytes.count
                condition.broadcast()
                return .block(block)
            }
            if let outcome = outcomes.removeValue(forKey: index) {
                blocks[index] = nil
                self.queued[index] = nil
                consuming = index + 1
                condition.broadcast()
                return .finished(outcome)
            }
            if consuming > index || stopped { return nil }
            condition.wait()
        }
    }

    /// Ends reading: threads stop at their next line and take no file.
    private func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
