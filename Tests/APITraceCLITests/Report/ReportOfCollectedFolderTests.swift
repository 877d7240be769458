import APITraceTestSupport
import APITraceCollectorTestSupport
import Foundation
import Testing

/// `apitrace report` over a folder the collector filled (day folders, partitioned names), against
/// the per-route table the collection tests also check the SQL queries with.
@Suite("apitrace report over the collector's folder")
struct ReportOfCollectedFolderTests {
    @Test("apitrace report over the same partitioned folder gives the same per-route table")
    func reportAgrees() async throws {
        let dir = TemporaryDirectory()
        try CollectedFolder.fill(dir)
        let expected = CollectedFolder.expected(dir)
        let result = try await runOffPool(try builtProduct("apitrace").path, ["report", "--format", "json", dir.path])
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        let report = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let routes = try #require(report["routes"] as? [[String: Any]])
        #expect(routes.count == expected.count)
        for want in expected {
            let row = try #require(routes.first { $0["method"] as? String == want.method && $0["route"] as? String == want.route }, "\(want.route) missing")
            #expect(row["requests"] as? Int == want.count)
            #expect((row["server_errors"] as? Int ?? 0) + (row["transport_errors"] as? Int ?? 0) == want.errors)
            #expect(row["client_errors"] as? Int == want.clientErrors)
            // The report's percentiles are nearest-rank from a sketch (at most 0.78% above exact), the
            // engines' are interpolated: on these hundreds of samples they agree within 2%.
            let latency = try #require(row["latency_ms"] as? [String: Double])
            for (got, wanted) in [(latency["p50"], want.p50), (latency["p95"], want.p95), (latency["p99"], want.p99)] {
                #expect(abs((got ?? .nan) - wanted) <= 0.02 * wanted, "\(want) vs report \(latency)")
            }
        }
    }
}
