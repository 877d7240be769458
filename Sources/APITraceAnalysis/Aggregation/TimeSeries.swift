import APITraceFormat

/// Counts per time bucket, mergeable, in bounded memory.
///
/// Events are counted in buckets of ``granularitySeconds`` aligned on the Unix epoch. When more
/// than ``maximumBuckets`` buckets exist the series coarsens itself to the next granularity of the
/// ladder (1 s, 5 s, 10 s, 30 s, 1 m, 5 m, 15 m, 30 m, 1 h, 3 h, 6 h, 12 h, 1 d, 7 d; doubling
/// past it), each a multiple of the one before, so counts stay exact.
public struct TimeSeries: Sendable {
    /// The granularities a series steps through, in seconds.
    public static let ladder: [Int64] = [1, 5, 10, 30, 60, 300, 900, 1800, 3600, 10_800, 21_600, 43_200, 86_400, 604_800]
    /// Most buckets held before coarsening.
    public static let maximumBuckets = 4096

    /// Width of a bucket in seconds.
    public private(set) var granularitySeconds: Int64
    /// Buckets by start (seconds since the epoch).
    public private(set) var buckets: [Int64: TimeBucket] = [:]

    /// Creates an empty series with a starting granularity.
    public init(granularitySeconds: Int64 = 1) {
        self.granularitySeconds = max(1, granularitySeconds)
    }

    /// The start of the bucket holding an instant given in milliseconds.
    @inline(__always)
    public func bucketStart(milliseconds: Int64) -> Int64 {
        EpochBuckets.start(of: EpochBuckets.index(of: milliseconds, width: 1000), width: granularitySeconds)
    }

    /// Adds counts to the bucket starting at `start` (as returned by ``bucketStart(milliseconds:)``).
    public mutating func add(_ counts: TimeBucket, at start: Int64) {
        buckets[start, default: TimeBucket()].merge(counts)
        if buckets.count > Self.maximumBuckets { coarsen(to: Self.next(after: granularitySeconds)) }
    }

    /// Adds another series, coarsening either to the larger granularity first.
    public mutating func merge(_ other: TimeSeries) {
        if other.granularitySeconds > granularitySeconds { coarsen(to: other.granularitySeconds) }
        if granularitySeconds > other.granularitySeconds {
            // Re-bucketed as they are added, rather than through a coarsened copy: a report merges
            // thousands of fine per-file series into one coarse total.
            for (start, bucket) in other.buckets { buckets[bucketStart(milliseconds: start * 1000), default: TimeBucket()].merge(bucket) }
        } else {
            for (start, bucket) in other.buckets { buckets[start, default: TimeBucket()].merge(bucket) }
        }
        while buckets.count > Self.maximumBuckets { coarsen(to: Self.next(after: granularitySeconds)) }
    }

    /// Re-buckets to a coarser granularity that is a multiple of the current one.
    public mutating func coarsen(to granularity: Int64) {
        guard granularity > granularitySeconds else { return }
        let old = buckets
        granularitySeconds = granularity
        buckets = [:]
        for (start, bucket) in old {
            buckets[bucketStart(milliseconds: start * 1000), default: TimeBucket()].merge(bucket)
        }
    }

    /// The buckets in time order, re-bucketed to `granularity` when it is coarser than the series'.
    /// Empty buckets between the first and the last are included, so charts show gaps as zeros.
    public func points(granularity: Int64? = nil) -> [(start: Int64, counts: TimeBucket)] {
        var series = self
        if let granularity, granularity > granularitySeconds, granularity % granularitySeconds == 0 {
            series.coarsen(to: granularity)
        }
        guard let first = series.buckets.keys.min(), let last = series.buckets.keys.max() else { return [] }
        let g = series.granularitySeconds
        let count = (last - first) / g + 1
        guard count <= Int64(Self.maximumBuckets * 4) else {
            return series.buckets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        return (0..<count).map { i in
            let start = first + i * g
            return (start, series.buckets[start] ?? TimeBucket())
        }
    }

    /// The granularity after `g`: the next ladder step, or twice `g` past the ladder.
    public static func next(after g: Int64) -> Int64 {
        if let step = ladder.first(where: { $0 > g && $0 % g == 0 }) { return step }
        return g * 2
    }

    /// A readable bucket width: the smallest ladder step that splits `spanSeconds` into at most
    /// `target` buckets, and at least `minimum`.
    public static func granularity(forSpanSeconds spanSeconds: Int64, target: Int = 60, minimum: Int64 = 1) -> Int64 {
        var g = minimum
        while spanSeconds / g >= Int64(target) { g = next(after: g) }
        return g
    }
}

/// What one time bucket counts.
public struct TimeBucket: Sendable, Equatable {
    /// Requests by outcome.
    public var requests = RequestCounts()
    /// Decode failures.
    public var decodeFailures = 0
    /// Recorded errors (`error` events, suppressed repeats included).
    public var recordedErrors = 0
    /// SSE reconnects.
    public var sseReconnects = 0

    /// Creates an empty bucket.
    public init() {}

    /// Adds another bucket's counts.
    public mutating func merge(_ other: TimeBucket) {
        requests.merge(other.requests)
        decodeFailures += other.decodeFailures
        recordedErrors += other.recordedErrors
        sseReconnects += other.sseReconnects
    }
}
