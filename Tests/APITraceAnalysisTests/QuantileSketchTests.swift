import APITraceAnalysis
import APITraceTestSupport
import Foundation
import Testing

@Suite("Quantile sketch")
struct QuantileSketchTests {
    @Test("every percentile is at or above the exact nearest-rank value and within the documented relative error")
    func relativeError() throws {
        var random = SystemRandomNumberGenerator()
        var values: [Double] = []
        var sketch = QuantileSketch()
        for _ in 0..<20_000 {
            // Three decimals, as trace durations are written; spread over six orders of magnitude.
            let v = (Double.random(in: -1...5, using: &random).exp10 * 1000).rounded() / 1000
            values.append(v)
            sketch.record(v)
        }
        for p in [1.0, 10, 50, 90, 95, 99, 99.9, 100] {
            let exact = exactPercentile(values, p)
            let got = try #require(sketch.percentile(p))
            #expect(got >= exact - 0.0005)
            #expect(got <= exact * (1 + QuantileSketch.relativeError) + 0.0005, "p\(p): \(got) vs \(exact)")
        }
        #expect(QuantileSketch.relativeError <= 0.01)
    }

    @Test("merging two sketches equals recording everything in one")
    func merge() {
        var a = QuantileSketch(), b = QuantileSketch(), all = QuantileSketch()
        for i in 0..<5000 {
            let v = Double(i % 977) * 1.37
            if i % 3 == 0 { a.record(v) } else { b.record(v) }
            all.record(v)
        }
        a.merge(b)
        for p in [50.0, 95, 99] { #expect(a.percentile(p) == all.percentile(p)) }
        #expect(a.count == all.count)
    }
}

extension Double {
    fileprivate var exp10: Double { Foundation.pow(10, self) }
}
