package import APITraceFormat
import Foundation

/// An HTTP Archive (HAR 1.2) of any number of requests, written as a stream in bounded memory:
/// `apitrace export --format har`.
///
/// HAR wants every entry in one `log.entries` array, and apitrace has always sorted them by start
/// time (end less duration, ties in reading order). A request's start may come before those of
/// requests read earlier, from any earlier file (a long request ends late), so no entry is final
/// until every file is read: each request line is scanned once, on one of the reading threads
/// (``HARFileReading``), and what its entry shows is held as a compact ``HAREntryRecord`` in
/// ``PendingLines``, the one external sort of trace lines (its memory bounded, the rest spilled to
/// sorted temporary runs), keyed by start; entries are written (``HAREntryWriter``) from those
/// records as they come out sorted, no line scanned twice.
///
/// ```swift
/// var har = HARStream(session: nil)
/// let read = try TraceExportReader().read(["traces/"], into: &har)
/// try har.write { chunk in FileHandle.standardOutput.write(Data(chunk)) }
/// ```
package struct HARStream {
    /// Only requests of a session matching this pattern are kept, when set.
    package var session: TextPattern?
    private var pending: PendingLines
    private let temporaryDirectory: String
    /// Entries held so far.
    package private(set) var count = 0

    /// A request held in the temporary folder came back other than it was written (the folder's
    /// files changed under the export).
    package struct DamagedEntry: Error, CustomStringConvertible {
        package var directory: String
        package var description: String { "a request held for sorting in \(directory) came back damaged; export again" }
    }

    /// Bytes of held requests kept in memory by default: their records take about 60 % of their
    /// lines, so as many requests as 16 MiB of lines (about 70,000), and the export's peak stays
    /// under 64 MiB with the reading and rendering threads' blocks and 1 MiB lines.
    package static let defaultMemoryLimit = 10 << 20

    /// A stream holding up to `memoryLimit` bytes of requests in memory, the rest in `temporaryDirectory`.
    package init(session: TextPattern? = nil, memoryLimit: Int = defaultMemoryLimit, temporaryDirectory: String = PendingLines.defaultTemporaryDirectory) {
        self.session = session
        pending = PendingLines(memoryLimit: memoryLimit, directory: temporaryDirectory)
        self.temporaryDirectory = temporaryDirectory
    }

    /// Reading threads of an export: one per core, up to 4 (the consumer that holds the requests
    /// in order keeps up with about that many).
    package static var readingThreads: Int { min(4, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Reads the trace files `files` on up to `threads` threads and holds their kept requests (of
    /// the chosen session), in reading order; hands each file's outcome to `finished`, in file order.
    ///
    /// `keepFile` and `keep` are called on the reading threads, several at once when `threads` > 1.
    ///
    /// - Throws: ``SortSpillError`` when requests could not be held in the temporary folder.
    package mutating func read(
        _ files: [String], threads: Int,
        keepFile: @escaping @Sendable (TraceFileHeader) -> Bool,
        keep: @escaping @Sendable (TraceRecord, UnsafeRawBufferPointer) -> Bool,
        finished: (_ isUsable: Bool, _ warnings: [TraceReadWarning]) -> Void
    ) throws(SortSpillError) {
        let session = session
        try HARFileReading.read(
            files, threads: threads, keepFile: keepFile,
            keep: { record, line in TextPattern.admits(session, record.session) && keep(record, line) },
            consume: { started, entry throws(SortSpillError) in
                try self.pending.add(started, entry)
                self.count += 1
            },
            finished: { finished($0.isUsable, $0.warnings) })
    }

    /// Writes the document, entries in start order, in blocks of about 500 KiB, the entries rendered
    /// on up to `threads` threads (``HAREntryRendering``); a block `write` throws for ends the
    /// export (what was written stays written).
    package mutating func write(creatorVersion: String = "0.1.0", threads: Int = HARStream.readingThreads, to write: (UnsafeRawBufferPointer) throws -> Void) throws {
        var head = JSONOutput()
        HAREntryWriter.head(creatorVersion: creatorVersion, to: &head)
        try head.bytes.withUnsafeBytes(write)
        let rendering = HAREntryRendering(threads: threads, directory: temporaryDirectory)
        func writeText(_ text: [UInt8]) throws { try text.withUnsafeBytes(write) }
        var block = HAREntryRendering.Block()
        var failure: (any Error)?
        try pending.forEach(before: .max) { _, entry in
            guard failure == nil else { return }
            block.bytes.append(contentsOf: entry)
            block.ends.append(block.bytes.count)
            guard block.bytes.count >= HAREntryRendering.blockSize else { return }
            do { try rendering.submit(block, write: writeText) } catch { failure = error }
            block = HAREntryRendering.Block()
            block.bytes.reserveCapacity(HAREntryRendering.blockSize + 4096)
        }
        do {
            if let failure { throw failure }
            if !block.ends.isEmpty { try rendering.submit(block, write: writeText) }
            try rendering.finish(write: writeText)
        } catch {
            rendering.cancel()
            throw error
        }
        var tail = JSONOutput()
        HAREntryWriter.tail(to: &tail)
        try tail.bytes.withUnsafeBytes(write)
    }
}
