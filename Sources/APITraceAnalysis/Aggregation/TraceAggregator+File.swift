public import APITraceFormat

extension TraceAggregator {
    /// Reads a whole trace file through the format module's one reading loop
    /// (``TraceFileReader/forEachRecord(header:_:)``), adding its events and any problems.
    ///
    /// A file that cannot hold events of the filter's time range (by its name, with
    /// ``TraceFileSelection/slack``) is skipped without opening it; a file whose header does not
    /// match the filter's app version is skipped after its first line. Damage ends reading that
    /// file with a warning that says how many events were kept; nothing is thrown.
    public mutating func read(_ reader: TraceFileReader) {
        if let name = TraceFileIdentity(fileName: reader.path), !filter.mayMatch(fileStarted: name.started) {
            base.filesFiltered += 1
            return
        }
        let filter = self.filter
        flushAppVersion()
        let scan = reader.forEachRecord(header: { filter.matches(header: $0) }) { record, _ in
            _ = add(record: record)
            return true
        }
        lastHeader = scan.header
        base.unknownTypes += scan.unknownTypes
        base.invalidLines += scan.invalidLines
        if scan.declined {
            base.filesFiltered += 1
            return
        }
        if scan.header == nil { base.filesUnusable += 1 } else { base.filesRead += 1 }
        if let header = scan.header {
            appVersionCounts.files += 1
            appVersion = header.appVersion ?? "-"
        }
        flushAppVersion()
        for warning in scan.warnings { base.addWarning(warning) }
    }
}
