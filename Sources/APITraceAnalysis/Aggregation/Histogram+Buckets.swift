import Histogram

extension Histogram where Count == UInt64 {
    /// The non-empty buckets in ascending order, each as its lowest equivalent value and count:
    /// what `recordedValues()` yields, read from the counters in one pass.
    ///
    /// The library keeps its counters internal and its iterator computes several values per
    /// counter, which made encoding a file's sketches for the summary cache cost a tenth of a
    /// cold run. The counters and the layout are read through the histogram's own `Codable`
    /// conformance (an encoder that keeps three fields and skips the rest, so the counters array
    /// is shared, not copied); nil when that layout is not there (another library version), and
    /// callers fall back to the iterator.
    func nonEmptyBuckets() -> [(value: UInt64, count: UInt64)]? {
        let capture = HistogramLayoutCapture()
        guard (try? encode(to: capture)) != nil, let counts = capture.counts,
              let half = capture.subBucketHalfCountMagnitude, let unit = capture.unitMagnitude,
              half < 32, unit < 64 else { return nil }
        var buckets: [(value: UInt64, count: UInt64)] = []
        let halfCount = 1 << Int(half)
        // The library's countsIndexForValue: only the counters between the smallest and largest
        // value recorded can be non-zero.
        func index(_ value: UInt64) -> Int {
            let magnitude = Int(half) + 1
            let mask = ((UInt64(1) << UInt64(magnitude)) - 1) << UInt64(unit)
            let bucket = (64 - Int(unit) - magnitude) - (value | mask).leadingZeroBitCount
            let subBucket = Int(truncatingIfNeeded: value >> UInt64(bucket + Int(unit)))
            return ((bucket + 1) << Int(half)) + (subBucket - halfCount)
        }
        counts.withUnsafeBufferPointer { counts in
            let lower = Swift.max(0, index(self.min)), upper = Swift.min(counts.count, index(maxRecorded) + 1)
            guard lower < upper else { return }
            for index in lower..<upper where counts[index] != 0 {
                // The library's valueFromIndex.
                var bucket = (index >> Int(half)) - 1
                var subBucket = (index & (halfCount - 1)) + halfCount
                if bucket < 0 {
                    subBucket -= halfCount
                    bucket = 0
                }
                let shift = bucket + Int(unit)
                guard shift < 64 else { continue }
                buckets.append((UInt64(subBucket) << UInt64(shift), counts[index]))
            }
        }
        // Every value must have been found; otherwise the layout is not what this code reads.
        guard buckets.reduce(0, { $0 &+ $1.count }) == totalCount else { return nil }
        return buckets
    }
}

/// An `Encoder` that keeps a histogram's counters and the two numbers that map a counter's index
/// to its value, and ignores everything else.
private final class HistogramLayoutCapture: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var counts: [UInt64]?
    var subBucketHalfCountMagnitude: UInt8?
    var unitMagnitude: UInt8?

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Fields(capture: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer { Ignored() }
    func singleValueContainer() -> any SingleValueEncodingContainer { Ignored() }

    struct Fields<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let capture: HistogramLayoutCapture
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) {}

        mutating func encode(_ value: UInt8, forKey key: Key) {
            switch key.stringValue {
            case "subBucketHalfCountMagnitude": capture.subBucketHalfCountMagnitude = value
            case "unitMagnitude": capture.unitMagnitude = value
            default: break
            }
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) {
            if key.stringValue == "counts", let counts = value as? [UInt64] {
                capture.counts = counts
            } else if let byte = value as? UInt8 {
                encode(byte, forKey: key)
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(HistogramLayoutCapture.Fields<NestedKey>(capture: HistogramLayoutCapture()))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Ignored() }
        mutating func superEncoder() -> any Encoder { HistogramLayoutCapture() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { HistogramLayoutCapture() }
    }

    struct Ignored: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        mutating func encodeNil() {}
        mutating func encode<T: Encodable>(_ value: T) {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(HistogramLayoutCapture.Fields<NestedKey>(capture: HistogramLayoutCapture()))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Ignored() }
        mutating func superEncoder() -> any Encoder { HistogramLayoutCapture() }
    }
}
