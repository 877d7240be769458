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
        let raw = forEachRawLine { bytes, number in
            if bytes.isEmpty { return true }
            if result.header == nil {
                guard number == 1, case .header(let header)? = try? TraceLine.decode(bytes) else {
                    result.warnings.append(.init(path: path, kind: .notATraceFile("line 1 is not an apitrace header"), eventsKept: 0))
                    return false
                }
                guard header.version <= TraceFileHeader.currentVersion else {
                    result.warnings.append(.init(path: path, kind: .newerVersion(header.version), eventsKept: 0))
                    return false
                }
                result.header = header
                do { try body(.header(header), number) } catch { bodyError = error; return false }
                return true
            }
            do {
                let line = try TraceLine.decode(bytes)
                switch line {
                case .event: result.events += 1
                case .unknown: result.unknownTypes += 1
                case .header: break
                }
                do { try body(line, number) } catch { bodyError = error; return false }
            } catch {
                result.invalidLines += 1
                result.warnings.append(.init(path: path, kind: .invalidLine(line: number, reason: "\(error)"), eventsKept: result.events))
            }
            return true
        }
        if let bodyError { try { throw bodyError }() }
        if let problem = raw.problem, result.header != nil || raw.lines == 0 {
            var warning = problem
            warning.eventsKept = result.events
            result.warnings.append(warning)
        }
        if result.header == nil, raw.lines == 0, raw.problem == nil {
            result.warnings.append(.init(path: path, kind: .notATraceFile("the file is empty"), eventsKept: 0))
        }
        return result
    }

    /// What ``forEachRawLine(_:)`` met besides lines.
    public struct RawResult: Sendable {
        /// Complete lines handed to the caller.
        public var lines = 0
        /// Decompressed bytes read.
        public var bytes = 0
        /// The problem that ended reading early, if any (`eventsKept` is left 0 for the caller to fill).
        public var problem: TraceReadWarning?
    }

    /// Hands each complete line's bytes (without the newline) to `body` with its 1-based number;
    /// `body` returns false to stop. The bytes are valid only during the call.
    ///
    /// This is the layer fast readers build on: it decompresses and splits, nothing more.
    @discardableResult
    public func forEachRawLine(_ body: (UnsafeRawBufferPointer, Int) -> Bool) -> RawResult {
        var result = RawResult()
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            result.problem = .init(path: path, kind: .unreadable(String(cString: strerror(errno))), eventsKept: 0)
            return result
        }
        defer { close(fd) }
        var input = [UInt8](repeating: 0, count: readSize)
        var splitter = LineSplitter()
        var inflater: GzipInflater?
        var sawFirstBlock = false
        var stopped = false
        func feed(_ block: UnsafeRawBufferPointer) {
            result.bytes += block.count
            if !stopped { stopped = !splitter.split(block) { line in
                result.lines += 1
                return body(line, result.lines)
            } }
        }
        while !stopped {
            let n = input.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                result.problem = .init(path: path, kind: .unreadable(String(cString: strerror(errno))), eventsKept: 0)
                return result
            }
            if n == 0 { break }
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
                input.withUnsafeBytes { feed(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            }
        }
        if stopped { return result }
        if let inflater {
            do { try inflater.finish() } catch {
                result.problem = .init(path: path, kind: .truncated(byteOffset: error.offset), eventsKept: 0)
            }
        }
        if splitter.hasPartialLine, result.problem == nil {
            result.problem = .init(path: path, kind: .partialLastLine(line: result.lines + 1), eventsKept: 0)
        }
        return result
    }
}

/// Splits a stream of bytes into lines, carrying a partial line from one block to the next.
struct LineSplitter {
    private var carry: [UInt8] = []

    var hasPartialLine: Bool { !carry.isEmpty }

    /// Calls `body` for each complete line; returns false as soon as `body` does.
    mutating func split(_ block: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard let base = block.baseAddress else { return true }
        var start = 0
        while start < block.count {
            guard let hit = memchr(base + start, 0x0A, block.count - start) else {
                carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: block[start...]))
                return true
            }
            let end = UnsafeRawPointer(hit) - base
            var keepGoing: Bool
            if carry.isEmpty {
                keepGoing = emit(UnsafeRawBufferPointer(rebasing: block[start..<end]), body)
            } else {
                carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: block[start..<end]))
                keepGoing = carry.withUnsafeBytes { emit($0, body) }
                carry.removeAll(keepingCapacity: true)
            }
            if !keepGoing { return false }
            start = end + 1
        }
        return true
    }

    private func emit(_ line: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        var line = line
        if line.last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
        return body(line)
    }
}
