package import APITraceFormat

/// An HTTP Archive (HAR 1.2) of any number of requests, written as a stream in bounded memory:
/// `apitrace export --format har`.
///
/// HAR wants every entry in one `log.entries` array, and apitrace has always sorted them by start
/// time (end less duration, ties in reading order). A request's start may come before those of
/// requests read earlier, from any earlier file (a long request ends late), so no entry is final
/// until every file is read: request lines are held in ``PendingLines``, the one external sort of
/// trace lines (its memory bounded, the rest spilled to sorted temporary runs), keyed by start, and
/// each is scanned again and written (``HAREntryWriter``) as the sorted lines come out.
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
    /// Entries held so far.
    package private(set) var count = 0

    /// A stream holding up to `memoryLimit` bytes of request lines in memory, the rest in `temporaryDirectory`.
    package init(session: TextPattern? = nil, memoryLimit: Int = 16 << 20, temporaryDirectory: String = PendingLines.defaultTemporaryDirectory) {
        self.session = session
        pending = PendingLines(memoryLimit: memoryLimit, directory: temporaryDirectory)
    }

    /// Holds the request of a scanned line (without its newline) when it is of the chosen session.
    package mutating func add(_ record: TraceRecord, line: UnsafeRawBufferPointer) throws(SortSpillError) {
        guard record.kind == .request else { return }
        guard TextPattern.admits(session, record.session) else { return }
        try pending.add(HAREntryWriter.started(record), line)
        count += 1
    }

    /// Writes the document, entries in start order, in blocks of about 256 KiB; a block `write`
    /// throws for ends the export (what was written stays written).
    package mutating func write(creatorVersion: String = "0.1.0", to write: (UnsafeRawBufferPointer) throws -> Void) throws {
        var out = JSONOutput()
        out.bytes.reserveCapacity(320 << 10)
        HAREntryWriter.head(creatorVersion: creatorVersion, to: &out)
        var scanner = TraceRecordScanner()
        var first = true
        var failure: (any Error)?
        try pending.forEach(before: .max) { _, line in
            guard failure == nil, case .event = scanner.scan(line) else { return }
            if !first { out.bytes.append(contentsOf: ",\n".utf8) }
            first = false
            HAREntryWriter.append(scanner.record, to: &out)
            if out.bytes.count >= 256 << 10 {
                do { try out.bytes.withUnsafeBytes(write) } catch { failure = error }
                out.bytes.removeAll(keepingCapacity: true)
            }
        }
        if let failure { throw failure }
        HAREntryWriter.tail(to: &out)
        try out.bytes.withUnsafeBytes(write)
    }
}
