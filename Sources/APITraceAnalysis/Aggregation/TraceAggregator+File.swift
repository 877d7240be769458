import APITraceFormat

extension TraceAggregator {
    /// Most invalid-line warnings kept per file; the rest are only counted.
    static let maximumLineWarningsPerFile = 20

    /// Reads a whole trace file through the fast path, adding its events and any problems.
    ///
    /// A file whose name says it started at or after the filter's `until` is skipped without
    /// opening it; a file whose header does not match the filter's app version is skipped after
    /// its first line. Damage ends reading that file with a warning that says how many events
    /// were kept; nothing is thrown.
    public mutating func read(_ reader: TraceFileReader) {
        if let name = TraceFileName(fileName: reader.path), !filter.mayMatch(fileStarted: name.started) {
            base.filesFiltered += 1
            return
        }
        var header: TraceFileHeader?
        var sawHeader = false  // checked per line; cheaper than testing the optional header
        var skipped = false
        var eventsKept = 0
        var lineWarnings = 0
        let raw = reader.forEachRawLine { bytes, number in
            if bytes.isEmpty { return true }
            guard sawHeader else {
                guard case .header(let h)? = try? TraceLine.decode(bytes) else {
                    base.addWarning(.init(path: reader.path, kind: .notATraceFile("line \(number) is not an apitrace header"), eventsKept: 0))
                    skipped = true
                    return false
                }
                guard h.version <= TraceFileHeader.currentVersion else {
                    base.addWarning(.init(path: reader.path, kind: .newerVersion(h.version), eventsKept: 0))
                    skipped = true
                    return false
                }
                header = h
                sawHeader = true
                if !filter.matches(header: h) {
                    base.filesFiltered += 1
                    skipped = true
                    return false
                }
                return true
            }
            switch add(line: bytes) {
            case .counted, .filtered:
                eventsKept += 1
            case .unknownType:
                base.unknownTypes += 1
            case .header:
                break
            case .invalid(let reason):
                base.invalidLines += 1
                lineWarnings += 1
                if lineWarnings <= Self.maximumLineWarningsPerFile {
                    base.addWarning(.init(path: reader.path, kind: .invalidLine(line: number, reason: reason), eventsKept: eventsKept))
                } else {
                    base.warningsOmitted += 1
                }
            }
            return true
        }
        if header == nil { base.filesUnusable += 1 }
        if header != nil && !skipped { base.filesRead += 1 }
        if skipped { return }
        if var problem = raw.problem {
            problem.eventsKept = eventsKept
            base.addWarning(problem)
        } else if header == nil {
            base.addWarning(.init(path: reader.path, kind: .notATraceFile("the file is empty"), eventsKept: 0))
        }
    }
}
