import APITraceFormat

/// Requests and failures of one rule's traffic in fixed time buckets, so any window's totals
/// are a subtraction of two prefix sums.
package struct FailureCounts: Sendable {
    /// Width of a bucket in milliseconds (10 s by default: a 5 m window is exact to 3%).
    package let bucketMilliseconds: Int64
    /// Index (time / width) of the first bucket.
    package let firstBucket: Int64
    private var prefixRequests: [Double]
    private var prefixFailures: [Double]

    /// Builds the prefix sums from per-bucket counts starting at `firstBucket`.
    init(bucketMilliseconds: Int64, firstBucket: Int64, requests: [Double], failures: [Double]) {
        self.bucketMilliseconds = bucketMilliseconds
        self.firstBucket = firstBucket
        prefixRequests = [0]
        prefixFailures = [0]
        prefixRequests.reserveCapacity(requests.count + 1)
        prefixFailures.reserveCapacity(requests.count + 1)
        for i in requests.indices {
            prefixRequests.append(prefixRequests[i] + requests[i])
            prefixFailures.append(prefixFailures[i] + failures[i])
        }
    }

    /// Totals over a time range (milliseconds since 1970, half-open), bucket-aligned: a bucket
    /// counts when its start lies in the range.
    package func totals(in range: Range<Int64>) -> WindowTotals {
        let n = Int64(prefixRequests.count - 1)
        func clampIndex(_ ms: Int64) -> Int {
            // The first bucket starting at or after `ms`; clamped before subtracting, so no instant overflows.
            let bucket = EpochBuckets.indexAtOrAfter(ms, width: bucketMilliseconds)
            return Int(min(max(bucket, firstBucket) - firstBucket, n))
        }
        let a = clampIndex(range.lowerBound), b = clampIndex(range.upperBound)
        guard b > a else { return WindowTotals(requests: 0, failures: 0) }
        return WindowTotals(requests: prefixRequests[b] - prefixRequests[a], failures: prefixFailures[b] - prefixFailures[a])
    }
}

/// Counts of one file or worker, kept in a growable dense run of buckets.
struct BucketRun {
    var first: Int64 = 0
    var requests: [Double] = []
    var failures: [Double] = []

    @inline(__always) mutating func add(bucket: Int64, requests r: Double, failures f: Double) {
        if requests.isEmpty {
            first = bucket
            requests = [r]; failures = [f]
            return
        }
        if bucket < first {
            let grow = Int(first - bucket)
            requests.insert(contentsOf: repeatElement(0, count: grow), at: 0)
            failures.insert(contentsOf: repeatElement(0, count: grow), at: 0)
            first = bucket
        }
        let i = Int(bucket - first)
        if i >= requests.count {
            requests.append(contentsOf: repeatElement(0, count: i - requests.count + 1))
            failures.append(contentsOf: repeatElement(0, count: i - failures.count + 1))
        }
        requests[i] += r
        failures[i] += f
    }

    mutating func merge(_ other: BucketRun) {
        guard !other.requests.isEmpty else { return }
        add(bucket: other.first, requests: 0, failures: 0)
        add(bucket: other.first + Int64(other.requests.count - 1), requests: 0, failures: 0)
        let offset = Int(other.first - first)
        for i in other.requests.indices {
            requests[offset + i] += other.requests[i]
            failures[offset + i] += other.failures[i]
        }
    }
}
