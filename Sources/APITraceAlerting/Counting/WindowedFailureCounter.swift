import APITraceFormat

/// Counts requests and failures per rule in time buckets, plus the evidence of what failed,
/// reading only the trace files that can hold events of the ranges asked for.
///
/// This is alerting's whole view of the traces: one pass, no decoding of fields it does not
/// need (`JSONScanner` over raw lines), files read in parallel.
///
/// ```swift
/// let counter = WindowedFailureCounter(rules: rules.rules, ranges: [now - 6 * 3_600_000 ..< now])
/// let result = counter.count(paths: ["traces/"])
/// result.counts[0].totals(in: now - 300_000 ..< now).ratio
/// ```
public struct WindowedFailureCounter: Sendable {
    /// The rules whose traffic is counted.
    public let rules: [AlertRule]
    /// Time ranges to count (milliseconds since 1970, half-open); events outside are ignored.
    public let ranges: [Range<Int64>]
    /// Per rule, the range whose failures are gathered as evidence (nil: none).
    public let evidenceRanges: [Range<Int64>?]
    /// Bucket width in milliseconds.
    public let bucketMilliseconds: Int64

    /// Creates a counter.
    public init(rules: [AlertRule], ranges: [Range<Int64>], evidenceRanges: [Range<Int64>?]? = nil, bucketMilliseconds: Int64 = 10_000) {
        self.rules = rules
        self.ranges = ranges
        self.evidenceRanges = evidenceRanges ?? Array(repeating: nil, count: rules.count)
        self.bucketMilliseconds = bucketMilliseconds
    }

    /// What a count produced.
    public struct Result: Sendable {
        /// Per rule (in rule order): bucketed requests and failures.
        public var counts: [FailureCounts]
        /// Per rule: evidence over its evidence range.
        public var evidence: [EvidenceTally]
        /// Trace files found under the paths.
        public var filesFound = 0
        /// Trace files opened (the rest were skipped by name).
        public var filesOpened = 0
        /// Event lines looked at.
        public var linesScanned = 0
        /// Problems reading files (damaged, unreadable); counting goes on without them.
        public var warnings: [TraceReadWarning] = []
    }

    /// Finds trace files under `paths` (files or folders), picks those that overlap the ranges, and counts them.
    public func count(paths: [String]) -> Result {
        let found = TraceFileDiscovery.find(paths)
        var result = count(files: found.files)
        result.warnings.insert(contentsOf: found.warnings, at: 0)
        return result
    }

    /// Counts the given trace files, skipping those whose names put them outside the ranges.
    public func count(files: [String]) -> Result {
        let selected = TraceFileSelection.select(files, overlapping: ranges)
        let plan = ScanPlan(counter: self)
        let perFile = ParallelTraceReader.map(selected) { reader in plan.scan(reader) }
        var runs = [BucketRun](repeating: BucketRun(), count: rules.count)
        var evidence = [EvidenceTally](repeating: EvidenceTally(), count: rules.count)
        var result = Result(counts: [], evidence: [], filesFound: files.count, filesOpened: selected.count)
        for file in perFile {
            for r in rules.indices {
                runs[r].merge(file.runs[r])
                evidence[r].merge(file.evidence[r])
            }
            result.linesScanned += file.lines
            result.warnings.append(contentsOf: file.warnings)
        }
        result.counts = runs.map { FailureCounts(bucketMilliseconds: bucketMilliseconds, firstBucket: $0.first, requests: $0.requests, failures: $0.failures) }
        result.evidence = evidence
        return result
    }
}
