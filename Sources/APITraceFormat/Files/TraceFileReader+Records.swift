extension TraceFileReader {
    /// Warnings about single lines of one file: the first ``limit`` listed, the rest counted, so a
    /// file of bad lines cannot fill a reader's memory or a terminal.
    package struct LineWarnings {
        /// Line warnings listed per file.
        package static let limit = 20
        package let path: String
        package private(set) var warnings: [TraceReadWarning] = []
        package private(set) var omitted = 0
        private var ignoredSampleRates = 0
        private var firstIgnoredSampleRateLine = 0

        package init(path: String) { self.path = path }

        package mutating func add(_ kind: TraceReadWarning.Kind, eventsKept: Int) {
            if warnings.count < Self.limit {
                warnings.append(.init(path: path, kind: kind, eventsKept: eventsKept))
            } else {
                omitted += 1
            }
        }

        /// Notes a line whose `sample_rate` was not honoured; reported once per file with a count.
        package mutating func addIgnoredSampleRate(line: Int) {
            if ignoredSampleRates == 0 { firstIgnoredSampleRateLine = line }
            ignoredSampleRates += 1
        }

        /// Every warning, the omitted count and ignored sample rates included.
        package func all(eventsKept: Int) -> [TraceReadWarning] {
            var out = warnings
            if ignoredSampleRates > 0 {
                out.append(.init(path: path, kind: .sampleRateIgnored(line: firstIgnoredSampleRateLine, count: ignoredSampleRates), eventsKept: eventsKept))
            }
            if omitted > 0 { out.append(.init(path: path, kind: .warningsOmitted(omitted), eventsKept: eventsKept)) }
            return out
        }
    }

    /// What ``forEachRecord(header:_:)`` read.
    package struct RecordScan: Sendable {
        /// The file's header; nil when the file was not a usable trace file.
        package var header: TraceFileHeader?
        /// True when the `header` callback declined the file.
        package var declined = false
        /// Event lines handed out.
        package var events = 0
        /// Lines of unknown event types, skipped.
        package var unknownTypes = 0
        /// Invalid lines, skipped (each warned of, up to the per-file limit).
        package var invalidLines = 0
        /// Lines whose `sample_rate` was ignored (counted once each).
        package var ignoredSampleRates = 0
        /// Decompressed bytes read.
        package var bytes = 0
        /// Where reading ended in the file (``RawResult/endOffset``).
        package var endOffset: Int64 = 0
        /// Problems, in file order, with the events kept.
        package var warnings: [TraceReadWarning] = []
    }

    /// The one loop every reader of traces stands on: checks the header (``HeaderCheck``), scans each
    /// event line once into a validated ``TraceRecord`` (``TraceRecordScanner``), and hands it to
    /// `body` with its line number; `body` returns false to stop. Invalid lines, overlong lines,
    /// ignored sample rates and damage become warnings naming the file and line or byte offset.
    ///
    /// `header` sees the header first and returns false to skip the file (an app-version filter).
    @discardableResult
    package func forEachRecord(
        header accept: (TraceFileHeader) -> Bool = { _ in true },
        _ body: (TraceRecord, Int) -> Bool
    ) -> RecordScan {
        forEachRecordLine(header: { header, _ in accept(header) }, { record, _, number in body(record, number) })
    }

    /// ``forEachRecord(header:_:)`` that also hands out each line's bytes as read (without the
    /// newline; valid only during the call): the header's to `header`, each event's to `body`,
    /// so a reader can pass validated lines through without encoding them again (`apitrace cat`).
    @discardableResult
    package func forEachRecordLine(
        header accept: (TraceFileHeader, UnsafeRawBufferPointer) -> Bool,
        _ body: (TraceRecord, UnsafeRawBufferPointer, Int) -> Bool
    ) -> RecordScan {
        var lines = RecordLines(path: path)
        let raw = forEachRawLine { bytes, number in
            lines.read(bytes, number: number, header: accept, body)
        }
        return lines.finish(raw)
    }

    /// The per-line rules of ``forEachRecordLine(header:_:)``, apart from where the lines come
    /// from: a file (``forEachRawLine(_:)``) or decompressed bytes handed in (``TraceRecordStream``,
    /// the collector's upload check), so both read, count and skip lines alike.
    package struct RecordLines {
        /// What was read so far; complete after ``finish(_:)``.
        package private(set) var scan = RecordScan()
        private var scanner = TraceRecordScanner()
        private var lineWarnings: LineWarnings
        private var counting = CountingLineScanner()
        /// `scan.header != nil`, kept apart: comparing the optional header with nil copied and
        /// destroyed the whole header (its strings) on every line.
        private var hasHeader = false

        /// Lines of the file at `path` (named in warnings).
        package init(path: String) { lineWarnings = LineWarnings(path: path) }

        /// ``read(_:number:header:_:)`` for counting: each event's counted fields (``CountedRecord``),
        /// read by ``CountingLineScanner`` when it vouches for the line (several times faster), by
        /// the full scanner otherwise; lines are accepted, counted and skipped exactly alike.
        @inline(__always)
        package mutating func readCounted(
            _ bytes: UnsafeRawBufferPointer, number: Int,
            header accept: (TraceFileHeader, UnsafeRawBufferPointer) -> Bool,
            _ body: (CountedRecord) -> Bool
        ) -> Bool {
            if hasHeader, counting.scan(bytes) {
                countEvent(number, ignoredSampleRate: counting.record.ignoredSampleRate)
                return body(counting.record)
            }
            return read(bytes, number: number, header: accept) { record, _, _ in body(CountedRecord(record)) }
        }

        /// Reads line `number` (without its newline): the header first, then each event, handed to
        /// `body`; returns false to stop (the header declined, or `body` said so).
        package mutating func read(
            _ bytes: UnsafeRawBufferPointer, number: Int,
            header accept: (TraceFileHeader, UnsafeRawBufferPointer) -> Bool,
            _ body: (TraceRecord, UnsafeRawBufferPointer, Int) -> Bool
        ) -> Bool {
            if bytes.isEmpty { return true }
            guard hasHeader else {
                switch HeaderCheck.check(bytes, line: number, path: lineWarnings.path) {
                case .failure(let warning):
                    scan.warnings.append(warning)
                    return false
                case .success(let header):
                    scan.header = header
                    hasHeader = true
                    if !accept(header, bytes) { scan.declined = true; return false }
                    return true
                }
            }
            switch scanner.scan(bytes) {
            case .event:
                countEvent(number, ignoredSampleRate: scanner.record.ignoredSampleRate)
                return body(scanner.record, bytes, number)
            case .unknownType:
                scan.unknownTypes += 1
            case .header:
                // Concatenated gzip members (a collector's appended file, Docs/trace-format.md): each
                // starts with its own header, of the same producer, app, version and host.
                if case .success(let next) = HeaderCheck.check(bytes, line: 1, path: lineWarnings.path), let first = scan.header,
                   next.producer == first.producer, next.app == first.app, next.appVersion == first.appVersion, next.host == first.host {
                    return true
                }
                scan.invalidLines += 1
                lineWarnings.add(.invalidLine(line: number, reason: "a second header line"), eventsKept: scan.events)
            case .invalid(let reason):
                scan.invalidLines += 1
                lineWarnings.add(.invalidLine(line: number, reason: reason), eventsKept: scan.events)
            }
            return true
        }

        @inline(__always)
        private mutating func countEvent(_ number: Int, ignoredSampleRate: Bool) {
            scan.events += 1
            if ignoredSampleRate {
                scan.ignoredSampleRates += 1
                lineWarnings.addIgnoredSampleRate(line: number)
            }
        }

        /// The scan with the warnings of the lines and of how reading ended (`raw`).
        package func finish(_ raw: RawResult) -> RecordScan {
            var scan = scan
            scan.bytes = raw.bytes
            scan.endOffset = raw.endOffset
            if scan.declined { return scan }
            scan.warnings += lineWarnings.all(eventsKept: scan.events)
            scan.warnings += raw.finish(header: scan.header != nil, eventsKept: scan.events, path: lineWarnings.path)
            return scan
        }
    }
}
