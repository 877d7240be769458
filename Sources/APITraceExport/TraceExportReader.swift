public import APITraceFormat

/// The read loop of an export: finds the trace files under the given files or folders, picks those
/// that can hold events of the time range (by name), reads each once, and hands the kept events to
/// an OpenMetrics or HAR export.
///
/// ```swift
/// var metrics = CumulativeExport(selection: "all")
/// let read = TraceExportReader(keepEvent: { $0.session == "s-1" }).read(["traces/"], into: &metrics)
/// print(metrics.metrics.text(), read.warnings)
/// ```
public struct TraceExportReader {
    /// Earliest and latest event times that files are picked for (nil: open).
    public var since: TraceTimestamp?
    public var until: TraceTimestamp?
    /// Which files (by header) and which events are exported.
    public var keepFile: (TraceFileHeader) -> Bool
    public var keepEvent: (TraceEvent) -> Bool {
        didSet { keepsEveryEvent = false }
    }
    /// True while no `keepEvent` was given: readers that scan lines then make no event to ask it.
    package private(set) var keepsEveryEvent: Bool
    /// Which events are exported, decided on the scanned line (no ``TraceEvent`` made): used by the
    /// streamed HAR export and the OTLP export instead of ``keepEvent`` when set.
    package var keepRecord: ((TraceRecord) -> Bool)?

    /// Creates a reader; by default every file and event is kept.
    public init(
        since: TraceTimestamp? = nil, until: TraceTimestamp? = nil,
        keepFile: @escaping (TraceFileHeader) -> Bool = { _ in true }, keepEvent: ((TraceEvent) -> Bool)? = nil
    ) {
        self.since = since
        self.until = until
        self.keepFile = keepFile
        self.keepEvent = keepEvent ?? { _ in true }
        keepsEveryEvent = keepEvent == nil
    }

    /// What a read found.
    public struct Outcome: Sendable {
        /// Trace files that could be read (or were counted whole before, for a cumulative export).
        public var usableFiles = 0
        /// Problems met, each naming its file (and line).
        public var warnings: [TraceReadWarning] = []
        /// Every trace file found under the paths, read or not.
        public var filesFound: [String] = []
    }

    /// Adds the kept events of the trace files under `paths` to a cumulative OpenMetrics export
    /// (files it counted whole before and that have not grown are not read again).
    public func read(_ paths: [String], into export: inout CumulativeExport) -> Outcome {
        forEachSelected(paths) { path in
            // nil: counted whole by an earlier run with this state and unchanged since.
            export.add(file: path, keepFile: keepFile, keepEvent: keepEvent).map { ($0.isUsable, $0.warnings) }
        }
    }

    /// Holds the kept requests of the trace files under `paths` in a streamed HAR export, each
    /// line scanned once (``TraceFileReader/forEachRecordLine(header:_:)``); nothing is written yet.
    ///
    /// - Throws: ``SortSpillError`` when lines could not be held in the temporary folder.
    package func read(_ paths: [String], into har: inout HARStream) throws(SortSpillError) -> Outcome {
        var spillError: SortSpillError?
        let outcome = forEachSelected(paths) { path in
            guard spillError == nil else { return nil }
            // A file that is not kept is still read, so its problems are reported as before.
            var keep = true
            let scan = TraceFileReader(path: path).forEachRecordLine(header: { header, _ in
                keep = keepFile(header)
                return true
            }) { record, line, _ in
                guard keep, record.kind == .request else { return true }
                if let keepRecord {
                    guard keepRecord(record) else { return true }
                } else {
                    guard case .event(let event)? = try? TraceLine.decode(line), keepEvent(event) else { return true }
                }
                do throws(SortSpillError) { try har.add(record, line: line) } catch { spillError = error; return false }
                return true
            }
            return (scan.header != nil, scan.warnings)
        }
        if let spillError { throw spillError }
        return outcome
    }

    /// Adds the kept requests of the trace files under `paths` to an in-memory HAR export.
    public func read(_ paths: [String], into har: inout HARExporter) -> Outcome {
        forEachSelected(paths) { path in
            var keep = true
            let result = TraceFileReader(path: path).forEachLine { line, _ in
                switch line {
                case .header(let header): keep = keepFile(header)
                case .event(let event) where keep && keepEvent(event): har.add(event)
                default: break
                }
            }
            return (result.isUsable, result.warnings)
        }
    }

    /// Runs `read` on every file of the time range; a nil result is a file known usable unread.
    private func forEachSelected(_ paths: [String], _ read: (String) -> (isUsable: Bool, warnings: [TraceReadWarning])?) -> Outcome {
        let found = TraceFileDiscovery.find(paths)
        var outcome = Outcome(warnings: found.warnings, filesFound: found.files)
        for path in TraceFileSelection.select(found.files, since: since, until: until) {
            guard let result = read(path) else {
                outcome.usableFiles += 1
                continue
            }
            if result.isUsable { outcome.usableFiles += 1 }
            outcome.warnings += result.warnings
        }
        return outcome
    }
}
