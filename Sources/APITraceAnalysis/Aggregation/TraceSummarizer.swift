import APITraceFormat
public import Foundation

/// Reads many trace files on all cores into one ``TraceSummary``.
///
/// Each file is counted by its own ``TraceAggregator`` (one file per core at a time) and its
/// summary merged into the total as soon as it is done, so memory stays bounded by the number of
/// cores, not the number of files.
///
/// ```swift
/// let summary = TraceSummarizer(filter: TraceFilter(route: "/apps/{id}")).summarize(paths: ["traces"])
/// ```
public struct TraceSummarizer: Sendable {
    /// The filter events must match.
    public var filter: TraceFilter
    /// Finest time-series bucket kept, in seconds.
    public var timeSeriesGranularity: Int64
    /// Files read at once; defaults to the number of cores.
    public var parallelism: Int
    /// Where whole-file summaries of finished files are kept between runs; nil reads every file.
    ///
    /// With a cache and the automatic granularity (1), a cached file's time series is kept at the
    /// bucket width a report of that file alone would choose: a report's automatic bucket width
    /// (``TimeSeries/granularity(forSpanSeconds:target:minimum:)`` over its whole span) is at least
    /// that, so reports are unchanged, but ``TraceSummary/timeSeries`` itself may be coarser than
    /// without the cache. Pass the granularity you need to keep finer buckets.
    public var cache: TraceSummaryCache?

    /// Progress, reported after each file is read: files done, files in all.
    public typealias Progress = @Sendable (_ filesDone: Int, _ filesTotal: Int) -> Void

    /// Creates a summarizer.
    public init(
        filter: TraceFilter = .all, timeSeriesGranularity: Int64 = 1,
        parallelism: Int = ProcessInfo.processInfo.activeProcessorCount, cache: TraceSummaryCache? = nil
    ) {
        self.cache = cache
        self.filter = filter
        self.timeSeriesGranularity = timeSeriesGranularity
        self.parallelism = parallelism
    }

    /// Finds the trace files under `paths` (files and folders, recursively) and summarizes them.
    /// Paths that do not exist become warnings in the summary.
    public func summarize(paths: [String], progress: Progress? = nil) -> TraceSummary {
        let found = TraceFileDiscovery.find(paths)
        // Files that cannot hold events of the time range are never opened (both ends, with slack).
        let range = (filter.since?.millisecondsSince1970 ?? .min)..<(filter.until?.millisecondsSince1970 ?? .max)
        let selected = TraceFileSelection.plan(found.files, overlapping: [range])
        var summary = summarize(selected.map { ($0.path, $0.isCacheable) }, progress: progress)
        if !found.warnings.isEmpty || selected.count < found.files.count {
            var all = TraceSummary(timeSeriesGranularity: timeSeriesGranularity)
            for warning in found.warnings { all.addWarning(warning) }
            all.filesUnusable = found.warnings.count
            all.filesFiltered = found.files.count - selected.count
            all.merge(summary)
            summary = all
        }
        return summary
    }

    /// Summarizes these files.
    public func summarize(files: [String], progress: Progress? = nil) -> TraceSummary {
        if cache == nil { return summarize(files.map { ($0, false) }, progress: progress) }
        let cacheable = Set(TraceFileSelection.plan(files).filter(\.isCacheable).map(\.path))
        return summarize(files.map { ($0, cacheable.contains($0)) }, progress: progress)
    }

    private func summarize(_ files: [(path: String, cacheable: Bool)], progress: Progress?) -> TraceSummary {
        let cacheable = Dictionary(files.map { ($0.path, $0.cacheable) }) { a, b in a && b }
        let directory = FileManager.default.currentDirectoryPath
        let absolute = { (path: String) in path.hasPrefix("/") ? path : directory + "/" + path }
        let granularity = timeSeriesGranularity
        // Without route, host or app-version conditions, a run merges the whole-file summaries of
        // its cached files anyway (those its time range holds whole): that merge is kept in the
        // cache, and stands in for those files in a later such run where they are all here,
        // unchanged, and inside its time range.
        let mergeable = cache != nil && !filter.hasFieldConditions && filter.appVersion == nil
        var toRead = files.map(\.path)
        var mergedSummaries: [TraceSummary] = []
        if let cache, mergeable, files.contains(where: \.cacheable), cache.hasMergedSummaries {
            let run = files.filter(\.cacheable).compactMap { file in
                FileStatus(path: file.path).map { TraceSummaryCache.RunFile(path: file.path, absolutePath: absolute(file.path), status: $0) }
            }
            let filter = self.filter
            let found = cache.mergedSummaries(of: run, granularity: granularity) { first, last in
                first.map { filter.matches(time: $0) } ?? true && last.map { filter.matches(time: $0) } ?? true
            }
            mergedSummaries = found.summaries
            if !found.covered.isEmpty { toRead.removeAll { found.covered.contains($0) } }
        }
        let done = Locked(files.count - toRead.count)
        // Each thread merges the files it read into its own totals; the few totals are merged at the end.
        let totals = ParallelTraceReader.reduce(toRead, parallelism: parallelism, into: {
            (read: TraceSummary(timeSeriesGranularity: granularity), stored: TraceSummary(timeSeriesGranularity: granularity),
             covered: [String: FileStatus](), repeated: false)
        }) { totals, reader in
            let (summary, whole) = summarize(reader, cacheable: cacheable[reader.path] ?? false, directory: directory)
            if mergeable, let whole {
                totals.stored.merge(summary)
                let path = reader.path.hasPrefix("/") ? reader.path : directory + "/" + reader.path
                if totals.covered.updateValue(whole, forKey: path) != nil { totals.repeated = true }
            } else {
                totals.read.merge(summary)
            }
            if let progress { progress(done.withLock { $0 += 1; return $0 }, files.count) }
        }
        var stored = TraceSummary(timeSeriesGranularity: granularity)
        var covered: [String: FileStatus] = [:]
        var repeated = false
        for total in totals {
            stored.merge(total.stored)
            repeated = repeated || total.repeated
            for (file, status) in total.covered where covered.updateValue(status, forKey: file) != nil { repeated = true }
        }
        if mergeable, !repeated {
            var named = stored
            for part in mergedSummaries { named.merge(part) }
            named.warnings = named.warnings.map { TraceReadWarning(path: absolute($0.path), kind: $0.kind, eventsKept: $0.eventsKept) }
            cache?.finish(merged: named, covered: covered, granularity: granularity)
        } else {
            cache?.finish()
        }
        var summary = TraceSummary(timeSeriesGranularity: granularity)
        for part in mergedSummaries + [stored] + totals.map(\.read) { summary.merge(part) }
        // Merge order varies between runs; keep warnings in file order.
        let order = Dictionary(files.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { a, _ in a })
        summary.warnings = summary.warnings.enumerated().sorted {
            (order[$0.element.path] ?? -1, $0.offset) < (order[$1.element.path] ?? -1, $1.offset)
        }.map(\.element)
        return summary
    }
}
