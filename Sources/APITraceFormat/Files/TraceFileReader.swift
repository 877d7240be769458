import Foundation

/// Streams one trace file (`.jsonl.gz`, or plain `.jsonl`) in constant memory.
///
/// ```swift
/// let result = TraceFileReader(path: "traces/20261122T100000Z-ab12-0001.jsonl.gz").forEachEvent { event in
///     print(event.type)
/// }
/// result.warnings.forEach { print($0) }
/// ```
///
/// A truncated or corrupt file yields every event before the damage plus a warning naming the
/// file and byte offset. Unknown event types and unknown fields are skipped.
public struct TraceFileReader: Sendable {
    /// Path of the file.
    public let path: String
    /// Size of each read from disk.
    public var readSize = 256 * 1024
    /// Longest line handed out; see ``maximumLineLength``.
    public var maximumLineLength = TraceFileReader.maximumLineLength
    /// Where reading starts: 0, or the start of a gzip member of a file that grows by appended
    /// members (``AppendedPrefix``), to read only what was appended since.
    package var startOffset: Int64 = 0

    /// Creates a reader for a file.
    public init(path: String) {
        self.path = path
    }

    /// What reading a file produced besides its events.
    public struct Result: Sendable {
        /// The file's header, when it had one.
        public var header: TraceFileHeader?
        /// Events handed to the caller.
        public var events = 0
        /// Lines of event types this reader does not know, skipped.
        public var unknownTypes = 0
        /// Lines skipped because they were not valid trace lines.
        public var invalidLines = 0
        /// Problems met, in file order.
        public var warnings: [TraceReadWarning] = []
        /// False when the file was skipped as a whole (unreadable, not a trace file, newer version).
        public var isUsable: Bool { header != nil }
    }

    /// Hands every event of the file to `body`, in file order.
    @discardableResult
    public func forEachEvent(_ body: (TraceEvent) throws -> Void) rethrows -> Result {
        try forEachLine { line, _ in
            if case .event(let event) = line { try body(event) }
        }
    }

    /// Hands every decoded line to `body`, the header first, with its line number.
    @discardableResult
    public func forEachLine(_ body: (TraceLine, Int) throws -> Void) rethrows -> Result {
        var result = Result()
        var bodyError: (any Error)?
        var lineWarnings = LineWarnings(path: path)
        let raw = forEachRawLine { bytes, number in
            if bytes.isEmpty { return true }
            if result.header == nil {
                switch HeaderCheck.check(bytes, line: number, path: path) {
                case .failure(let warning):
                    result.warnings.append(warning)
                    return false
                case .success(let header):
                    result.header = header
                    do { try body(.header(header), number) } catch { bodyError = error; return false }
                    return true
                }
            }
            do {
                let line = try TraceLine.decode(bytes)
                switch line {
                case .event(let event):
                    result.events += 1
                    if case .request(let r) = event.payload, RequestWeight.of(outcome: r.outcome, sampleRate: r.sampleRate).ignoredSampleRate {
                        lineWarnings.addIgnoredSampleRate(line: number)
                    }
                case .unknown: result.unknownTypes += 1
                case .header: break
                }
                do { try body(line, number) } catch { bodyError = error; return false }
            } catch {
                result.invalidLines += 1
                lineWarnings.add(.invalidLine(line: number, reason: "\(error)"), eventsKept: result.events)
            }
            return true
        }
        if let bodyError { try { throw bodyError }() }
        result.warnings += lineWarnings.all(eventsKept: result.events)
        result.warnings += raw.finish(header: result.header != nil, eventsKept: result.events, path: path)
        return result
    }

    /// What ``forEachRawLine(_:)`` met besides lines.
    package struct RawResult: Sendable {
        /// Complete lines handed to the caller (lines cut for length included, as numbers).
        package var lines = 0
        /// Decompressed bytes read.
        package var bytes = 0
        /// Where reading ended in the file: ``TraceFileReader/startOffset`` and the bytes read from disk.
        package var endOffset: Int64 = 0
        /// The problem that ended reading early, if any (`eventsKept` is left 0 for the caller to fill).
        package var problem: TraceReadWarning?
        /// Lines longer than the limit, skipped (the first few as warnings, `eventsKept` left 0).
        package var longLines: [TraceReadWarning] = []
        /// Lines longer than the limit beyond those in ``longLines``.
        package var longLinesOmitted = 0

        /// The warnings a reader adds after its own: long lines, then the problem that ended the file
        /// (or "empty" for a file without a single line), with `eventsKept` filled in.
        package func finish(header: Bool, eventsKept: Int, path: String) -> [TraceReadWarning] {
            var out = longLines.map { var w = $0; w.eventsKept = eventsKept; return w }
            if longLinesOmitted > 0 {
                out.append(.init(path: path, kind: .warningsOmitted(longLinesOmitted), eventsKept: eventsKept))
            }
            if let problem, header || lines == 0 {
                var warning = problem
                warning.eventsKept = eventsKept
                out.append(warning)
            }
            if !header, lines == 0, problem == nil {
                out.append(.init(path: path, kind: .notATraceFile("the file is empty"), eventsKept: 0))
            }
            return out
        }
    }

    /// Longest line read, in bytes; a longer line is skipped up to its newline with a warning
    /// naming its number and byte offset, so a file cannot make a reader hold an endless line.
    public static let maximumLineLength = 1 << 20

    /// Hands each complete line's bytes (without the newline) to `body` with its 1-based number;
    /// `body` returns false to stop. The bytes are valid only during the call.
    ///
    /// This is the layer fast readers build on: it decompresses and splits, nothing more.
    @discardableResult
    package func forEachRawLine(_ body: (UnsafeRawBufferPointer, Int) -> Bool) -> RawResult {
        var result = RawResult()
        let fd: Int32
        // An open collector file sealed (renamed) since it was listed is read under its new name.
        switch RegularFile.open(path).flatMapError({ refusal in
            TraceFileIdentity.sealedSuccessor(ofOpen: path).map { RegularFile.open($0) } ?? .failure(refusal)
        }) {
        case .success(let opened): fd = opened
        case .failure(let refusal):
            result.problem = .init(path: path, kind: .unreadable(refusal.reason), eventsKept: 0)
            return result
        }
        defer { close(fd) }
        // An open collector file is read up to the last member its journal records: never a half-appended one.
        var remaining = TraceFileIdentity.committedLength(ofOpen: path).map { $0 - startOffset } ?? .max
        result.endOffset = startOffset
        if startOffset > 0 {
            guard remaining >= 0, lseek(fd, off_t(startOffset), SEEK_SET) == off_t(startOffset) else {
                result.problem = .init(path: path, kind: .unreadable("it is shorter than the \(startOffset) bytes read before"), eventsKept: 0)
                return result
            }
        }
        var input = [UInt8](repeating: 0, count: max(2, readSize))
        var splitter = LineSplitter(limit: maximumLineLength)
        var inflater: GzipInflater?
        var sawFirstBlock = false
        var stopped = false
        func feed(_ block: UnsafeRawBufferPointer) throws {
            result.bytes += block.count
            if !stopped { stopped = !splitter.split(block) { line, lineStart in
                result.lines += 1
                guard let line else {
                    if result.longLines.count < TraceFileReader.LineWarnings.limit {
                        result.longLines.append(.init(path: path, kind: .lineTooLong(line: result.lines, byteOffset: lineStart, limit: maximumLineLength), eventsKept: 0))
                    } else {
                        result.longLinesOmitted += 1
                    }
                    return true
                }
                return body(line, result.lines)
            } }
            // A first line past the limit is no header: refused at once, not read to its end
            // (2 GiB of NULs, or a gzip bomb of them, would take minutes before the next newline).
            if !stopped, result.lines == 0, splitter.isSkippingLongLine {
                stopped = true
                result.problem = .init(path: path, kind: .notATraceFile("its first line is longer than \(maximumLineLength) bytes"), eventsKept: 0)
            }
            // Thrown out of the inflater so that it stops decompressing what nobody will read.
            if stopped { throw StopReading() }
        }
        while !stopped {
            var n = input.withUnsafeMutableBytes { read(fd, $0.baseAddress, Int(min(Int64($0.count), remaining))) }
            // The gzip magic is two bytes: a first read of one (a pipe, a network file system) reads on.
            while !sawFirstBlock, n == 1 {
                let more = input.withUnsafeMutableBytes { read(fd, $0.baseAddress! + 1, Int(min(Int64($0.count - 1), remaining - 1))) }
                if more < 0, errno == EINTR { continue }
                if more <= 0 { break }
                n += more
            }
            if n < 0 {
                if errno == EINTR { continue }
                result.problem = .init(path: path, kind: .unreadable(String(cString: strerror(errno))), eventsKept: 0)
                return result
            }
            if n == 0 { break }
            remaining -= Int64(n)
            result.endOffset += Int64(n)
            if !sawFirstBlock {
                sawFirstBlock = true
                if n >= 2, input[0] == 0x1F, input[1] == 0x8B {
                    do { inflater = try GzipInflater() } catch {
                        result.problem = .init(path: path, kind: .unreadable("\(error)"), eventsKept: 0)
                        return result
                    }
                }
            }
            if let inflater {
                do {
                    try input.withUnsafeBytes { try inflater.inflate(UnsafeRawBufferPointer(rebasing: $0[0..<n]), into: feed) }
                } catch let error as GzipError {
                    result.problem = .init(path: path, kind: .corrupt(byteOffset: error.offset, detail: error.zlibMessage ?? "invalid data"), eventsKept: 0)
                    return result
                } catch {
                    return result
                }
            } else {
                try? input.withUnsafeBytes { try feed(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            }
        }
        if stopped { return result }
        if let inflater {
            do { try inflater.finish() } catch {
                result.problem = .init(path: path, kind: .truncated(byteOffset: error.offset), eventsKept: 0)
            }
        }
        if splitter.hasPartialLine, result.problem == nil {
            // A partial last line is what a killed writer leaves; counted as a line, not handed out.
            result.problem = .init(path: path, kind: .partialLastLine(line: result.lines + 1), eventsKept: 0)
        }
        return result
    }
}

/// Ends a read early: thrown by the sink so the inflater stops too.
private struct StopReading: Error {}

/// Splits a stream of bytes into lines, carrying a partial line from one block to the next, and
/// never more than `limit` bytes of one: a longer line is handed out as `nil` and skipped.
package struct LineSplitter {
    private var carry: [UInt8] = []
    private let limit: Int
    /// True while skipping the rest of a line that passed the limit.
    private var skipping = false
    /// Decompressed bytes before the current block.
    private var consumed = 0
    private var nextLineStart = 0

    package init(limit: Int = .max) { self.limit = limit }

    package var hasPartialLine: Bool { !carry.isEmpty && !skipping }

    /// True while the current line has passed the limit and its rest is being skipped.
    package var isSkippingLongLine: Bool { skipping }

    /// Calls `body` for each complete line (`nil` for one past the limit) with the decompressed byte
    /// offset where it starts; returns false as soon as `body` does.
    package mutating func split(_ block: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?, Int) -> Bool) -> Bool {
        defer { consumed += block.count }
        guard let base = block.baseAddress else { return true }
        var start = 0
        while start < block.count {
            guard let hit = memchr(base + start, 0x0A, block.count - start) else {
                if !skipping {
                    if carry.count + (block.count - start) > limit {
                        skipping = true
                        carry.removeAll()
                    } else {
                        carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: block[start...]))
                    }
                }
                return true
            }
            let end = UnsafeRawPointer(hit) - base
            let lineStart = nextLineStart
            nextLineStart = consumed + end + 1
            var keepGoing: Bool
            if skipping || carry.count + (end - start) > limit {
                skipping = false
                carry.removeAll()
                keepGoing = body(nil, lineStart)
            } else if carry.isEmpty {
                keepGoing = emit(UnsafeRawBufferPointer(rebasing: block[start..<end]), lineStart, body)
            } else {
                carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: block[start..<end]))
                keepGoing = carry.withUnsafeBytes { emit($0, lineStart, body) }
                carry.removeAll(keepingCapacity: carry.count <= 65_536)
            }
            if !keepGoing { return false }
            start = end + 1
        }
        return true
    }

    private func emit(_ line: UnsafeRawBufferPointer, _ lineStart: Int, _ body: (UnsafeRawBufferPointer?, Int) -> Bool) -> Bool {
        var line = line
        if line.last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
        return body(line, lineStart)
    }
}
