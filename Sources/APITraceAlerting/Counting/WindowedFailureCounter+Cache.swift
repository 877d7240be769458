import APITraceFormat

/// How ``WindowedFailureCounter`` counts one file with a ``FileCountCache``: a finished file from
/// its entry or in full, a collector's open file from the counts of its prefix plus the gzip
/// members appended since. Counts come out as a whole count of the file would (``ScanPlan``
/// over `span`); whatever cannot be shown to (damage, events outside the span, a grouped rule's
/// groups past `max_groups`) is counted afresh.
struct CachedCounting {
    let cache: FileCountCache
    /// The span the cached counts cover (``WindowedFailureCounter/cachedSpan(of:)``).
    let span: Range<Int64>
    let rules: [AlertRule]
    let signatures: [String]
    let grouped: [Bool]
    let bucketMilliseconds: Int64

    /// The plan counting a whole file over ``span``.
    private var whole: ScanPlan {
        ScanPlan(counter: WindowedFailureCounter(rules: rules, ranges: [span], bucketMilliseconds: bucketMilliseconds))
    }

    /// A finished file's counts; nil when they must be counted over the run's ranges instead
    /// (events outside the span).
    func countFinished(_ reader: TraceFileReader, status: FileStatus) -> ScanPlan.FileCounts? {
        if let counts = cachedFinished(reader.path, status: status) { return counts }
        let counts = whole.scan(reader)
        guard counts.outsideSpan == 0 else { return nil }
        if counts.warnings.isEmpty { cache.store(counts.runs, groups: counts.groups, for: reader.path, status: status, signatures: signatures) }
        return counts
    }

    /// A finished file's counts from its cache entry, when the file is unchanged since they were
    /// stored and they lie in the span; nil: the file must be read.
    func cachedFinished(_ path: String, status: FileStatus) -> ScanPlan.FileCounts? {
        guard let (runs, groups) = cache.runs(for: path, status: status, signatures: signatures, grouped: grouped), fits(runs, groups) else { return nil }
        return cachedCounts(runs, groups)
    }

    /// An open file's counts: its cached prefix's, plus the members appended since (read from the
    /// prefix's end), or all of it read again when the prefix no longer holds. Nil when it must be
    /// counted over the run's ranges instead.
    func countAppended(_ reader: TraceFileReader, status: FileStatus) -> ScanPlan.FileCounts? {
        if let prefix = cache.appended(for: reader.path, status: status, signatures: signatures, grouped: grouped), fits(prefix.runs, prefix.groups) {
            let length = TraceFileIdentity.committedLength(ofOpen: reader.path) ?? status.size
            if length == prefix.prefix.offset {
                return cachedCounts(prefix.runs, prefix.groups)
            }
            if length > prefix.prefix.offset, let merged = extend(prefix, reader: reader, status: status) {
                return merged
            }
        }
        let counts = whole.scan(reader)
        guard counts.outsideSpan == 0 else { return nil }
        if counts.warnings.isEmpty, let header = counts.header, !counts.declined,
           let mark = AppendedPrefix(path: reader.path, offset: counts.endOffset) {
            cache.storeAppended(counts.runs, groups: counts.groups, for: reader.path, status: status, prefix: mark,
                                context: FileCountCache.context(of: header), signatures: signatures)
        }
        return counts
    }

    /// The prefix's counts with the members after it, when they read cleanly, share the first
    /// member's header context, and a grouped rule's groups stay within `max_groups` (so adding
    /// them up equals counting the file at once).
    private func extend(_ prefix: FileCountCache.AppendedCounts, reader: TraceFileReader, status: FileStatus) -> ScanPlan.FileCounts? {
        var rest = reader
        rest.startOffset = prefix.prefix.offset
        var counts = whole.scan(rest)
        guard counts.warnings.isEmpty, counts.outsideSpan == 0, !counts.declined,
              let header = counts.header, FileCountCache.context(of: header) == prefix.context else { return nil }
        for r in rules.indices {
            if grouped[r] {
                guard !counts.overflowed[r], prefix.groups[r][AlertGroup.otherCountingKey] == nil else { return nil }
                var merged = prefix.groups[r]
                for (key, run) in counts.groups[r] { merged[key, default: BucketRun()].merge(run) }
                guard merged.count <= rules[r].maxGroups else { return nil }
                counts.groups[r] = merged
            }
            counts.runs[r].merge(prefix.runs[r])
        }
        if let mark = AppendedPrefix(path: reader.path, offset: counts.endOffset) {
            cache.storeAppended(counts.runs, groups: counts.groups, for: reader.path, status: status, prefix: mark,
                                context: prefix.context, signatures: signatures)
        }
        return counts
    }

    private func cachedCounts(_ runs: [BucketRun], _ groups: [[String: BucketRun]]) -> ScanPlan.FileCounts {
        ScanPlan.FileCounts(
            runs: runs, groups: groups, overflowed: rules.indices.map { groups[$0][AlertGroup.otherCountingKey] != nil },
            evidence: Array(repeating: EvidenceTally(), count: rules.count), lines: 0, fromCache: true)
    }

    /// True when every cached run lies in the span's buckets: a forged entry cannot make merging
    /// allocate more than the span holds.
    private func fits(_ runs: [BucketRun], _ groups: [[String: BucketRun]]) -> Bool {
        let low = span.lowerBound / bucketMilliseconds - 1, high = span.upperBound / bucketMilliseconds + 1
        func fits(_ run: BucketRun) -> Bool {
            run.requests.isEmpty || (run.first >= low && run.first <= high && Int64(run.requests.count) <= high - run.first + 1
                && run.failures.count == run.requests.count)
        }
        return runs.allSatisfy(fits) && groups.allSatisfy { $0.values.allSatisfy(fits) }
    }
}
