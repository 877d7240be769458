import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The one floor of instants into buckets (`EpochBuckets`), against Python's own floor and ceiling
/// division (arbitrary-precision integers, so no overflow there), over ordinary, negative and
/// extreme instants.
@Suite("EpochBuckets")
struct EpochBucketsTests {
    static let values: [Int64] = [
        0, 1, 999, 1000, 1001, 59_999, 60_000, 60_001, -1, -999, -1000, -1001, -60_000, -60_001,
        1_795_341_600_000, 1_795_341_659_999, 253_402_300_799_999, .max, .max - 1, .min, .min + 1,
    ]
    static let widths: [Int64] = [1, 7, 1000, 10_000, 60_000, 86_400_000, .max]

    @Test("index, indexAtOrAfter and start are Python's //, -(-a // b) and (a // b) * b, without trapping")
    func agreesWithPython() async throws {
        let pairs = Self.values.flatMap { v in Self.widths.map { [String(v), String($0)] } }
        let input = try JSONSerialization.data(withJSONObject: pairs)
        let script = #"""
        import json, sys
        out = []
        for a, b in json.load(sys.stdin):
            a, b = int(a), int(b)
            start = (a // b) * b
            out.append([str(a // b), str(-(-a // b)), str(max(start, -2**63))])
        print(json.dumps(out))
        """#
        let run = try await runOffPool("/usr/bin/python3", ["-c", script], stdin: input)
        #expect(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        let expected = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [[String]])
        #expect(expected.count == pairs.count)
        for (pair, want) in zip(pairs, expected) {
            let value = Int64(pair[0])!, width = Int64(pair[1])!
            #expect(String(EpochBuckets.index(of: value, width: width)) == want[0], "index \(value) / \(width)")
            #expect(String(EpochBuckets.indexAtOrAfter(value, width: width)) == want[1], "ceiling \(value) / \(width)")
            #expect(String(EpochBuckets.start(of: value, width: width)) == want[2], "start \(value) / \(width)")
        }
    }

    @Test("a width below 1 counts as 1 instead of trapping")
    func widthBelowOne() {
        #expect(EpochBuckets.index(of: 42, width: 0) == 42)
        #expect(EpochBuckets.start(of: -5, width: -10) == -5)
    }
}
