/// The one floor of instants into buckets of a fixed width aligned on the Unix epoch: the
/// report's time series, the alert counter's buckets, an incident's repeat interval and a
/// timestamp's day all cut time here, so an instant lands in the same bucket everywhere.
///
/// Floor division, also before 1970 (`-1 ms` is in the bucket starting at `-width`), and without
/// overflow for any `Int64` (the naive `(t - width + 1) / width` traps near `Int64.min`).
///
/// ```swift
/// EpochBuckets.index(of: 125_000, width: 60_000)   // 2
/// EpochBuckets.start(of: 125_000, width: 60_000)   // 120000
/// EpochBuckets.index(of: -1, width: 60_000)        // -1
/// ```
package enum EpochBuckets {
    /// The index of the bucket holding `value`: ⌊value / width⌋. A `width` below 1 counts as 1.
    @inline(__always)
    package static func index(of value: Int64, width: Int64) -> Int64 {
        let width = max(width, 1)
        let quotient = value / width
        return value % width < 0 ? quotient - 1 : quotient
    }

    /// The index of the first bucket starting at or after `value`: ⌈value / width⌉.
    @inline(__always)
    package static func indexAtOrAfter(_ value: Int64, width: Int64) -> Int64 {
        let width = max(width, 1)
        let quotient = value / width
        return value % width > 0 ? quotient + 1 : quotient
    }

    /// The start of the bucket holding `value` (its index times `width`), clamped to `Int64.min`
    /// where that start lies before it.
    @inline(__always)
    package static func start(of value: Int64, width: Int64) -> Int64 {
        let (start, overflow) = index(of: value, width: width).multipliedReportingOverflow(by: max(width, 1))
        return overflow ? .min : start
    }
}
