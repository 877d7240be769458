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
    /// line scanned once (``TraceFileReader/forEachRecordLine(header:_:)``), the files read on up to
    /// `threads` threads; nothing is written yet. With ``keepRecord`` set (or no ``keepEvent``),
    /// ``keepFile`` and ``keepRecord`` are called on several threads at once; a ``keepEvent`` is
    /// asked on one thread at a time.
    ///
    /// - Throws: ``SortSpillError`` when lines could not be held in the temporary folder.
    package func read(_ paths: [String], into har: inout HARStream, threads: Int = HARStream.readingThreads) throws(SortSpillError) -> Outcome {
        let found = TraceFileDiscovery.find(paths)
        var outcome = Outcome(warnings: found.warnings, filesFound: found.files)
        let files = TraceFileSelection.select(found.files, since: since, until: until)
        // The reading threads take the filters as they are: a caller's keepEvent, which need not be
        // safe to share, is asked by one reading thread only (one call at a time, the caller waiting).
        let filters = UncheckedFilters(keepFile: keepFile, keepRecord: keepRecord, keepEvent: keepsEveryEvent ? nil : keepEvent)
        // A file that is not kept is still read, so its problems are reported as before.
        try har.read(
            files, threads: keepRecord == nil && !keepsEveryEvent ? 1 : threads,
            keepFile: { filters.keepFile($0) },
            keep: { record, line in
                if let keepRecord = filters.keepRecord { return keepRecord(record) }
                guard let keepEvent = filters.keepEvent else { return true }
                guard case .event(let event)? = try? TraceLine.decode(line) else { return false }
                return keepEvent(event)
            },
            finished: { isUsable, warnings in
                if isUsable { outcome.usableFiles += 1 }
                outcome.warnings += warnings
            })
        return outcome
    }

    /// The filters of a streamed HAR export, handed to its reading threads (see ``read(_:into:threads:)``).
    private struct UncheckedFilters: @unchecked Sendable {
        var keepFile: (TraceFileHeader) -> Bool
        var keepRecord: ((TraceRecord) -> Bool)?
        var keepEvent: ((TraceEvent) -> Bool)?
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
