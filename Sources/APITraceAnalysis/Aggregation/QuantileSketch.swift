import Histogram

/// A mergeable distribution of non-negative values (latencies in milliseconds, events per
/// connection) with bounded memory and a documented relative error.
///
/// Values are recorded in thousandths (trace durations carry three decimals of a millisecond,
/// so nothing is lost there) into an HdrHistogram with two significant digits: every reported
/// percentile is at or above the exact nearest-rank percentile of the recorded values and at most
/// ``relativeError`` (1/128 = 0.78 %) above it, and never above the largest value recorded.
/// Memory is 128 counters per power of two of the largest value: about 26 KB up to an hour in
/// milliseconds, whatever the number of values.
///
/// ```swift
/// var sketch = QuantileSketch()
/// sketch.record(42.125)
/// sketch.percentile(99)  // 42.125 (within 0.78 %)
/// ```
public struct QuantileSketch: Sendable {
    /// Largest relative error of a reported percentile: 1/128 (0.78125 %).
    public static let relativeError = 1.0 / 128.0

    /// Allocated on the first value: most sketches of a file summary stay empty, and a histogram
    /// costs a few thousand counters to create and to merge.
    var histogram: Histogram<UInt64>?
    /// Values recorded, weights included.
    public internal(set) var count: UInt64 = 0
    /// Sum of the recorded values, weights included, for the mean.
    public internal(set) var sum: Double = 0

    /// Creates an empty sketch.
    public init() {}

    /// An empty histogram of the sketch's layout, sized for values up to an hour (it grows past it).
    /// Copied rather than created: creating one zeroes its counters through the library's generic
    /// code, element by element; a copy's first write duplicates them in one block.
    static var emptyHistogram: Histogram<UInt64> { emptyHistograms[0] }

    /// ``emptyHistogram`` and, after it, empty histograms sized for values of 27 to 62 bits: a
    /// sketch read back from the cache starts at the size of its largest value, since growing a
    /// histogram (the library's generic resize) costs far more than copying one.
    static let emptyHistograms: [Histogram<UInt64>] = ([60_000_000] + (27...62).map { (UInt64(1) << UInt64($0)) - 1 }).map { (highest: UInt64) in
        var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: highest, numberOfSignificantValueDigits: .two)
        histogram.autoResize = true
        return histogram
    }

    /// An empty histogram that holds `value` without growing.
    static func emptyHistogram(holding value: UInt64) -> Histogram<UInt64> {
        let bits = UInt64.bitWidth - value.leadingZeroBitCount
        return value <= 60_000_000 ? emptyHistograms[0] : emptyHistograms[Swift.min(emptyHistograms.count - 1, Swift.max(1, bits - 26))]
    }

    /// Records one value `weight` times. Negative and non-finite values count as 0; values are
    /// rounded to thousandths.
    /// Buckets read back from the summary cache and not yet in a histogram. A warm report merges
    /// thousands of cached sketches into one: recording their few dozen buckets into the total is
    /// far cheaper than building a histogram per sketch and adding whole counter arrays.
    var buckets: Buckets?

    /// Non-empty buckets (lowest equivalent value in thousandths, count) and the exact extremes.
    struct Buckets: Sendable {
        var values: [(value: UInt64, count: UInt64)]
        var smallest: UInt64
        var largest: UInt64

        /// Records the buckets into `histogram`, keeping the extremes exact.
        func record(into histogram: inout Histogram<UInt64>) {
            for (value, count) in values { histogram.record(value, count: count) }
            histogram.record(largest, count: 0)
            if smallest > 0 { histogram.record(smallest, count: 0) }
        }

        var histogram: Histogram<UInt64> {
            var histogram = QuantileSketch.emptyHistogram(holding: largest)
            record(into: &histogram)
            return histogram
        }
    }

    /// The sketch's values in a histogram, building it from cached buckets if need be.
    private var filledHistogram: Histogram<UInt64>? { histogram ?? buckets?.histogram }

    @inline(__always)
    public mutating func record(_ value: Double, weight: UInt64 = 1) {
        let clean = value.isFinite && value > 0 ? Swift.min(value, 1e15) : 0
        let scaled = UInt64((clean * 1000).rounded())
        if let pending = buckets { histogram = pending.histogram; buckets = nil }
        if histogram == nil {
            histogram = Self.emptyHistogram(holding: scaled)
        } else if scaled > histogram!.highestTrackableValue {
            // Copying a larger empty histogram and adding this one is much cheaper than the
            // library's own resize (generic code), which long SSE connections hit on every file.
            var larger = Self.emptyHistogram(holding: scaled)
            larger.add(histogram!)
            histogram = larger
        }
        histogram!.record(scaled, count: weight)
        count &+= weight
        sum += clean * Double(weight)
    }

    /// Adds another sketch's values to this one.
    public mutating func merge(_ other: QuantileSketch) {
        guard other.count > 0 else { return }
        if count == 0 {
            (histogram, buckets) = (other.histogram, other.buckets)
        } else {
            if let pending = buckets { histogram = pending.histogram; buckets = nil }
            if let theirs = other.histogram {
                if histogram == nil { histogram = theirs } else { histogram!.add(theirs) }
            } else if let theirs = other.buckets {
                if histogram == nil { histogram = Self.emptyHistogram(holding: theirs.largest) }
                theirs.record(into: &histogram!)
            }
        }
        count &+= other.count
        sum += other.sum
    }

    /// The nearest-rank percentile (`p` from 0 to 100), or `nil` when empty.
    ///
    /// The exact percentile is the value at rank `max(1, ceil(p/100 × count))` of the sorted
    /// values; the result is at most ``relativeError`` above it.
    public func percentile(_ p: Double) -> Double? {
        guard count > 0, let histogram = filledHistogram else { return nil }
        return Double(histogram.valueAtPercentile(p)) / 1000
    }

    /// The largest value recorded, or `nil` when empty.
    public var max: Double? {
        guard count > 0 else { return nil }
        if let buckets { return Double(buckets.largest) / 1000 }
        return histogram.map { Double($0.maxRecorded) / 1000 }
    }

    /// The mean, or `nil` when empty.
    public var mean: Double? { count > 0 ? sum / Double(count) : nil }
}
