import APITraceFormat
import Foundation

extension TraceSummarizer {
    /// The summary of one file under the filter: from the cache when an entry answers the filter,
    /// otherwise read (and, for a cacheable file, read whole and stored first).
    ///
    /// A collector's open file is cached too, up to the length read (its journal's committed length,
    /// or its size): a later run is served that summary while the file has not grown and its bytes
    /// are unchanged, and reads it again otherwise. It never joins the cache's merged summary.
    ///
    /// A cached whole-file summary answers a filter when the filter has no route or host condition
    /// (the summary does not keep events apart by them) and every event of the file lies inside the
    /// time range; an app-version filter is answered from the stored header. A `--since` or
    /// `--until` cutting through the file means reading it.
    ///
    /// `whole` is the file's status when the summary is the file's entry as it is, served from the
    /// cache or stored by this run (its time range holds the file whole, and no other condition
    /// applies): the cache's merged summary may then include it.
    func summarize(_ reader: TraceFileReader, cacheable: Bool, directory: String) -> (summary: TraceSummary, whole: FileStatus?) {
        let granularity = timeSeriesGranularity
        var aggregator = TraceAggregator(filter: filter, timeSeriesGranularity: granularity)
        let identity = TraceFileIdentity(fileName: reader.path)
        // A collector's open file is cached up to the length read, while the bytes before it are unchanged.
        let open = identity?.kind == .open
        guard let cache, cacheable || open, !filter.hasFieldConditions,
              identity.map({ filter.mayMatch(fileStarted: $0.started) }) ?? true,
              let status = FileStatus(path: reader.path) else {
            aggregator.read(reader)
            return (aggregator.summary(), nil)
        }
        let absolute = reader.path.hasPrefix("/") ? reader.path : directory + "/" + reader.path
        let length = open ? TraceFileIdentity.committedLength(ofOpen: reader.path) ?? status.size : 0
        var entry = open
            ? cache.openEntry(absolutePath: absolute, path: reader.path, status: status, length: length, granularity: granularity)
            : cache.entry(absolutePath: absolute, path: reader.path, status: status, granularity: granularity)
        let hit = entry != nil && !open
        var stored = false
        if entry == nil {
            // Read the whole file without filters, so the entry serves every later run.
            var whole = TraceAggregator(timeSeriesGranularity: granularity)
            whole.read(reader)
            var summary = whole.summary()
            // With automatic bucket widths (granularity 1), the time series is kept at the width a
            // report of this file alone would show. A report including the whole file spans at least
            // as long, so it shows buckets at least that wide (a multiple: both are ladder steps),
            // and its output is unchanged; entries and merging shrink from thousands of buckets to dozens.
            if granularity == 1, let first = summary.firstEvent, let last = summary.lastEvent {
                let span = (last.millisecondsSince1970 - first.millisecondsSince1970) / 1000
                summary.timeSeries.coarsen(to: TimeSeries.granularity(forSpanSeconds: span))
            }
            let read = TraceSummaryCache.Entry(summary: summary, header: whole.lastHeader.map(\.appVersion))
            entry = read
            // Not stored: a file that could not be read (a permission may change without touching
            // its status) or that changed while it was read.
            let failed = read.summary.warnings.contains { if case .unreadable = $0.kind { true } else { false } }
            if !failed, open {
                // Stored only when it was read up to the length known before (nothing appended or
                // committed meanwhile), from the same file.
                if let now = FileStatus(path: reader.path), now.inode == status.inode,
                   (TraceFileIdentity.committedLength(ofOpen: reader.path) ?? now.size) == length,
                   let prefix = AppendedPrefix(path: reader.path, offset: length) {
                    cache.storeOpen(read, absolutePath: absolute, path: reader.path, status: now, prefix: prefix, granularity: granularity)
                }
            } else if !failed, FileStatus(path: reader.path) == status {
                stored = cache.store(read, absolutePath: absolute, path: reader.path, status: status, granularity: granularity)
            }
        }
        guard let entry else { return (aggregator.summary(), nil) }
        if let wanted = filter.appVersion, case .some(let version) = entry.header, version != wanted {
            var declined = TraceSummary(timeSeriesGranularity: granularity)
            declined.filesFiltered = 1
            return (declined, nil)
        }
        let inRange = entry.summary.firstEvent.map { filter.matches(time: $0) } ?? true
            && entry.summary.lastEvent.map { filter.matches(time: $0) } ?? true
        if inRange { return (entry.summary, filter.appVersion == nil && (hit || stored) ? status : nil) }
        aggregator.read(reader)
        return (aggregator.summary(), nil)
    }
}
