package import APITraceFormat
import Foundation

/// Counts requests and failures per rule in time buckets, plus the evidence of what failed,
/// reading only the trace files that can hold events of the ranges asked for.
///
/// This is alerting's whole view of the traces: one pass, no decoding of fields it does not
/// need (the one line decoder, `TraceRecordScanner`, as every reader), files read in parallel.
///
/// ```swift
/// let counter = WindowedFailureCounter(rules: rules.rules, ranges: [now - 6 * 3_600_000 ..< now])
/// let result = counter.count(paths: ["traces/"])
/// result.counts[0].totals(in: now - 300_000 ..< now).ratio
/// ```
package struct WindowedFailureCounter: Sendable {
    /// The rules whose traffic is counted.
    package let rules: [AlertRule]
    /// Time ranges to count (milliseconds since 1970, half-open); events outside are ignored.
    package let ranges: [Range<Int64>]
    /// Per rule, the range whose failures are gathered as evidence (nil: none).
    package let evidenceRanges: [Range<Int64>?]
    /// Per rule, the range before the evidence range whose traffic is the baseline the evidence
    /// window is compared with (``EvidenceTally/comparison``; nil: no comparison).
    package let comparisonBaselines: [Range<Int64>?]
    /// Bucket width in milliseconds.
    package let bucketMilliseconds: Int64
    /// Counts of finished files from earlier runs; with a cache no evidence is gathered
    /// (cached files have none): gather it with a second counter over the evidence range.
    package let cache: FileCountCache?

    /// Creates a counter.
    package init(rules: [AlertRule], ranges: [Range<Int64>], evidenceRanges: [Range<Int64>?]? = nil, comparisonBaselines: [Range<Int64>?]? = nil,
                bucketMilliseconds: Int64 = 10_000, cache: FileCountCache? = nil) {
        self.rules = rules
        self.ranges = ranges
        self.evidenceRanges = cache == nil ? evidenceRanges ?? Array(repeating: nil, count: rules.count) : Array(repeating: nil, count: rules.count)
        self.comparisonBaselines = cache == nil ? comparisonBaselines ?? Array(repeating: nil, count: rules.count) : Array(repeating: nil, count: rules.count)
        self.bucketMilliseconds = bucketMilliseconds
        self.cache = cache
    }

    /// What identifies a rule's counts in the cache: scope, failure definition, bucket width.
    var signatures: [String] {
        rules.map { r in
            let f = r.failure
            // "outcomes-1": counts under the format's outcome and weight rules (client-side outcomes
            // left out, sample rates bounded); entries from before them never match.
            var parts: [String] = ["outcomes-1", r.scope.route ?? "", r.scope.host ?? "", r.scope.appVersion ?? "",
                    f.statuses.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ","), "\(f.transport)", "\(f.decodeFailures)",
                    f.includeErrors.joined(separator: ","), f.excludeErrors.joined(separator: ","), r.latencyMs.map { "latency \($0)" } ?? "",
                    "\(bucketMilliseconds)"]
            // Appended only when set, so the entries of request rules stay valid.
            if f.webSocketCloses { parts.append("websocket-closes") }
            // A grouped rule's entry also holds its groups' runs, counted under its cap.
            if !r.groupBy.isEmpty { parts.append("group_by " + r.groupBy.map(\.rawValue).joined(separator: ",") + " max \(r.maxGroups)") }
            return parts.joined(separator: "\u{1}")
        }
    }

    /// What a count produced.
    package struct Result: Sendable {
        /// Per rule (in rule order): bucketed requests and failures.
        package var counts: [FailureCounts]
        /// Per rule: evidence over its evidence range.
        package var evidence: [EvidenceTally]
        /// Per rule: a grouped rule's counts by group (empty for other rules), at most its
        /// `max_groups` groups plus the `(other)` group holding the rest.
        package var groups: [[AlertGroup: FailureCounts]] = []
        /// Per rule: true when a grouped rule's traffic held more groups than its `max_groups`
        /// (the rest are counted in the `(other)` group).
        package var groupsOverflowed: [Bool] = []
        /// Trace files found under the paths.
        package var filesFound = 0
        /// Trace files opened (the rest were skipped by name or taken from the cache).
        package var filesOpened = 0
        /// Finished trace files whose counts came from the cache.
        package var filesFromCache = 0
        /// Event lines looked at.
        package var linesScanned = 0
        /// Problems reading files (damaged, unreadable); counting goes on without them.
        package var warnings: [TraceReadWarning] = []
    }

    /// Finds trace files under `paths` (files or folders), picks those that overlap the ranges, and counts them.
    package func count(paths: [String]) -> Result {
        let found = TraceFileDiscovery.find(paths)
        var result = count(files: found.files)
        result.warnings.insert(contentsOf: found.warnings, at: 0)
        return result
    }

    /// The span over which a selected file's counts are kept in the cache: a finished file's
    /// (``TraceFileSelection/SelectedFile/isCacheable``), or for a collector's open file, from an
    /// hour before its start to the longest span a cached file may have (it is sealed by the hour);
    /// nil for a file counted over each run's ranges.
    static func cachedSpan(of file: TraceFileSelection.SelectedFile) -> Range<Int64>? {
        if file.isCacheable { return file.finishedSpan }
        guard let identity = TraceFileIdentity(fileName: file.path), identity.kind == .open else { return nil }
        let start = identity.started.millisecondsSince1970 - 3_600_000
        return start..<(start + TraceFileSelection.maximumCachedSpan)
    }

    /// Counts the given trace files, skipping those whose names put them outside the ranges.
    package func count(files: [String]) -> Result {
        let selected = TraceFileSelection.plan(files, overlapping: ranges)
        let plan = ScanPlan(counter: self)
        let spans = Dictionary(selected.map { ($0.path, Self.cachedSpan(of: $0)) }) { a, _ in a }
        let cache = self.cache, signatures = self.signatures, rules = self.rules, grouped = rules.map { !$0.groupBy.isEmpty }
        let bucketMilliseconds = self.bucketMilliseconds
        @Sendable func cachedCounting(_ span: Range<Int64>) -> CachedCounting {
            CachedCounting(cache: cache!, span: span, rules: rules, signatures: signatures, grouped: grouped, bucketMilliseconds: bucketMilliseconds)
        }
        @Sendable func countRead(_ reader: TraceFileReader) -> ScanPlan.FileCounts {
            // Only finished files of a plausible span, and a collector's open files, are cached
            // (``cachedSpan(of:)``); the rest are counted over this run's ranges: memory follows the
            // rules' windows, not file names.
            guard cache != nil, let span = spans[reader.path] ?? nil,
                  let status = FileStatus(path: reader.path) else {
                return plan.scan(reader)
            }
            // Count the whole file (not just this run's ranges) so the entry serves every later run.
            let cached = cachedCounting(span)
            let counts = TraceFileIdentity(fileName: reader.path)?.kind == .open
                ? cached.countAppended(reader, status: status) : cached.countFinished(reader, status: status)
            return counts ?? plan.scan(reader)
        }
        // Finished files the cache holds are not handed to the reading threads: a cron run starts
        // threads only for the files it must read (its few open ones). Their counts are decoded one
        // file at a time as they are merged below, in file order, so the memory of one file's runs
        // is used again by the next instead of a day of them held at once.
        var fromCache = [(status: FileStatus, span: Range<Int64>)?](repeating: nil, count: selected.count)
        if let cache {
            for (i, file) in selected.enumerated() where file.isCacheable {
                guard let span = spans[file.path] ?? nil, let status = FileStatus(path: file.path),
                      cache.holdsRuns(for: file.path, status: status, signatures: signatures) else { continue }
                fromCache[i] = (status, span)
            }
        }
        let toRead = selected.indices.filter { fromCache[$0] == nil }
        var read = ParallelTraceReader.map(toRead.map { selected[$0].path }, countRead).makeIterator()
        var runs = [BucketRun](repeating: BucketRun(), count: rules.count)
        var evidence = [EvidenceTally](repeating: EvidenceTally(), count: rules.count)
        var groups = GroupMerge(rules: rules)
        var result = Result(counts: [], evidence: [], filesFound: files.count)
        for (i, selectedFile) in selected.enumerated() {
            let file: ScanPlan.FileCounts
            if let (status, span) = fromCache[i] {
                // An entry that cannot be used after all (damaged) is counted here, as a reading thread would.
                file = cachedCounting(span).cachedFinished(selectedFile.path, status: status) ?? countRead(TraceFileReader(path: selectedFile.path))
            } else {
                file = read.next()!
            }
            for r in rules.indices {
                runs[r].merge(file.runs[r])
                evidence[r].merge(file.evidence[r])
            }
            groups.merge(file)
            result.linesScanned += file.lines
            if file.fromCache { result.filesFromCache += 1 } else { result.filesOpened += 1 }
            result.warnings.append(contentsOf: file.warnings)
        }
        cache?.save()
        result.counts = runs.map { FailureCounts(bucketMilliseconds: bucketMilliseconds, firstBucket: $0.first, requests: $0.requests, failures: $0.failures) }
        result.evidence = evidence
        result.groups = groups.counts(bucketMilliseconds: bucketMilliseconds)
        result.groupsOverflowed = groups.overflowed
        return result
    }
}
