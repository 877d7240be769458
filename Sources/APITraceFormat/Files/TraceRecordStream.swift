/// Reads trace lines out of decompressed bytes handed in as they come, by the rules of
/// ``TraceFileReader/forEachRecordLine(header:_:)``: the same splitting (a line past
/// ``TraceFileReader/maximumLineLength`` skipped, a partial last line not read), the same header
/// check and the same scan of each line (``TraceFileReader/RecordLines``).
///
/// For bytes that are inflated anyway by someone else: the collector reads an upload's lines in
/// the pass that checks its gzip data, instead of inflating the stored file a second time.
///
/// ```swift
/// let stream = TraceRecordStream(name: "upload")
/// try inflater.inflate(body) { block in stream.feed(block) { record, _, _ in tally.add(record); return true } }
/// let scan = stream.finish()
/// ```
package final class TraceRecordStream {
    // Each taken out of the object while a block is read (``feed(_:header:_:)``): a class's stored
    // properties are checked for exclusive access at run time, which on every line cost about as
    // much as counting it.
    private var splitter: LineSplitter?
    private var lines: TraceFileReader.RecordLines?
    private var raw: TraceFileReader.RawResult? = TraceFileReader.RawResult()
    private let name: String
    private let maximumLineLength: Int
    private var stopped = false

    /// A stream whose warnings name `name` (a path, or what the bytes are).
    package init(name: String, maximumLineLength: Int = TraceFileReader.maximumLineLength) {
        self.name = name
        self.maximumLineLength = maximumLineLength
        splitter = LineSplitter(limit: maximumLineLength)
        lines = TraceFileReader.RecordLines(path: name)
    }

    /// Reads the complete lines `block` ends, handing the header to `header` and each event to
    /// `body` (both return false to stop); returns false once reading has stopped.
    @discardableResult
    package func feed(
        _ block: UnsafeRawBufferPointer,
        header accept: (TraceFileHeader, UnsafeRawBufferPointer) -> Bool = { _, _ in true },
        _ body: (TraceRecord, UnsafeRawBufferPointer, Int) -> Bool
    ) -> Bool {
        feed(block) { lines, line, number in lines.read(line, number: number, header: accept, body) }
    }

    /// ``feed(_:header:_:)`` for counting: each event's counted fields (``TraceFileReader/RecordLines/readCounted(_:number:header:_:)``).
    @discardableResult
    package func feed(
        _ block: UnsafeRawBufferPointer,
        header accept: (TraceFileHeader, UnsafeRawBufferPointer) -> Bool = { _, _ in true },
        counted body: (CountedRecord) -> Bool
    ) -> Bool {
        feed(block) { lines, line, number in lines.readCounted(line, number: number, header: accept, body) }
    }

    @inline(__always)
    private func feed(_ block: UnsafeRawBufferPointer, _ read: (inout TraceFileReader.RecordLines, UnsafeRawBufferPointer, Int) -> Bool) -> Bool {
        guard !stopped else { return false }
        // Moved out, the object keeping nothing meanwhile, so each stays uniquely referenced.
        var splitter = self.splitter!, lines = self.lines!, raw = self.raw!
        self.splitter = nil; self.lines = nil; self.raw = nil
        defer { self.splitter = splitter; self.lines = lines; self.raw = raw }
        raw.bytes += block.count
        let name = name, maximumLineLength = maximumLineLength
        var stopped = !splitter.split(block) { line, lineStart in
            raw.lines += 1
            guard let line else {
                if raw.longLines.count < TraceFileReader.LineWarnings.limit {
                    raw.longLines.append(.init(path: name, kind: .lineTooLong(line: raw.lines, byteOffset: lineStart, limit: maximumLineLength), eventsKept: 0))
                } else {
                    raw.longLinesOmitted += 1
                }
                return true
            }
            return read(&lines, line, raw.lines)
        }
        // As a file's reader does: a first line past the limit is no header, and is not read to its end.
        if !stopped, raw.lines == 0, splitter.isSkippingLongLine {
            stopped = true
            raw.problem = .init(path: name, kind: .notATraceFile("its first line is longer than \(maximumLineLength) bytes"), eventsKept: 0)
        }
        self.stopped = stopped
        return !stopped
    }

    /// What was read: the header, events, skipped lines and warnings (a partial last line among them).
    package func finish() -> TraceFileReader.RecordScan {
        var raw = raw!
        if !stopped, splitter!.hasPartialLine, raw.problem == nil {
            raw.problem = .init(path: name, kind: .partialLastLine(line: raw.lines + 1), eventsKept: 0)
        }
        return lines!.finish(raw)
    }
}
