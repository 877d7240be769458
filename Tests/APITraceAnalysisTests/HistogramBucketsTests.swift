@testable import APITraceAnalysis
import APITraceSynthetic
import Histogram
import Testing

/// Reading a histogram's counters directly must give exactly what the library's own iterator gives.
@Suite("Histogram.nonEmptyBuckets")
struct HistogramBucketsTests {
    @Test("the non-empty buckets read from the counters are the library's recorded values, for sketches of every size")
    func matchesIterator() throws {
        var generator = SplitMix64(seed: 4)
        for round in 0..<200 {
            var sketch = QuantileSketch()
            let magnitude = Double(1 << (round % 40))
            for _ in 0..<Int.random(in: 1...400, using: &generator) {
                let value = round % 7 == 0 ? 0 : Double.random(in: 0...magnitude, using: &generator)
                sketch.record(value, weight: UInt64.random(in: 1...3, using: &generator))
            }
            let histogram = try #require(sketch.histogram)
            let fast = try #require(histogram.nonEmptyBuckets())
            let slow = histogram.recordedValues().map { (histogram.lowestEquivalentForValue($0.value), UInt64($0.count)) }
            #expect(fast.map(\.value) == slow.map(\.0), "round \(round)")
            #expect(fast.map(\.count) == slow.map(\.1), "round \(round)")
        }
    }
}
