import APITraceFormat
import Foundation

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

    /// Progress, reported after each file is read: files done, files in all.
    public typealias Progress = @Sendable (_ filesDone: Int, _ filesTotal: Int) -> Void

    /// Creates a summarizer.
    public init(
        filter: TraceFilter = .all, timeSeriesGranularity: Int64 = 1,
        parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
    ) {
        self.filter = filter
        self.timeSeriesGranularity = timeSeriesGranularity
        self.parallelism = parallelism
    }

    /// Finds the trace files under `paths` (files and folders, recursively) and summarizes them.
    /// Paths that do not exist become warnings in the summary.
    public func summarize(paths: [String], progress: Progress? = nil) -> TraceSummary {
        let found = TraceFileDiscovery.find(paths)
        // Files that cannot hold events of the time range are never opened (both ends, with slack).
        let selected = TraceFileSelection.select(found.files, since: filter.since, until: filter.until)
        var summary = summarize(files: selected, progress: progress)
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
        let total = Accumulator(TraceSummary(timeSeriesGranularity: timeSeriesGranularity))
        let filter = filter
        let granularity = timeSeriesGranularity
        _ = ParallelTraceReader.map(files, parallelism: parallelism) { reader in
            var aggregator = TraceAggregator(filter: filter, timeSeriesGranularity: granularity)
            aggregator.read(reader)
            let done = total.merge(aggregator.summary())
            progress?(done, files.count)
        }
        var summary = total.value
        // Merge order varies between runs; keep warnings in file order.
        let order = Dictionary(files.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        summary.warnings = summary.warnings.enumerated().sorted {
            (order[$0.element.path] ?? -1, $0.offset) < (order[$1.element.path] ?? -1, $1.offset)
        }.map(\.element)
        return summary
    }
}

/// The running total, merged into under a lock by the reading threads.
private final class Accumulator: @unchecked Sendable {
    private var summary: TraceSummary
    private var merged = 0
    private let lock = NSLock()

    init(_ summary: TraceSummary) { self.summary = summary }

    /// Merges a file's summary; returns how many files are done.
    func merge(_ other: TraceSummary) -> Int {
        lock.lock(); defer { lock.unlock() }
        summary.merge(other)
        merged += 1
        return merged
    }

    var value: TraceSummary {
        lock.lock(); defer { lock.unlock() }
        return summary
    }
}
