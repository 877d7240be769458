import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Testing

/// The documented DuckDB and ClickHouse (chdb) queries of Docs/sql, run by python3 over a folder the
/// collector filled, checked against a computation in Swift over the same events.
@Suite("Per-route SQL over the collector's folder")
struct CollectionQueryTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func query(_ engine: String, _ dir: TemporaryDirectory) async throws -> [CollectedFolder.Row] {
        let sqlFile = packageRoot + "/Docs/sql/per-route.\(engine).sql"
        let result = try await runOffPool("/usr/bin/env", ["python3", packageRoot + "/Scripts/query-traces.py", engine, sqlFile, dir.path])
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        guard result.status == 0 else {
            Issue.record("python3 \(engine) query failed (exit \(result.status)): \(stderr) — install the engines with Scripts/install-test-deps.sh")
            return []
        }
        return try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map { line in
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            func int(_ k: String) -> Int { (o[k] as? NSNumber)?.intValue ?? Int(o[k] as? String ?? "") ?? -1 }
            func dbl(_ k: String) -> Double { (o[k] as? NSNumber)?.doubleValue ?? Double(o[k] as? String ?? "") ?? .nan }
            return CollectedFolder.Row(method: o["method"] as! String, route: o["route"] as! String, count: int("count"), errors: int("errors"),
                       clientErrors: int("client_errors"), p50: dbl("p50_ms"), p95: dbl("p95_ms"), p99: dbl("p99_ms"))
        }
    }

    @Test("DuckDB and ClickHouse give the Swift computation's counts exactly and its percentiles within 1e-6", .requires(.duckdb, .chdb), arguments: ["duckdb", "clickhouse"])
    func agrees(engine: String) async throws {
        let dir = TemporaryDirectory()
        try CollectedFolder.fill(dir)
        let expected = CollectedFolder.expected(dir)
        #expect(expected.count == 3)
        #expect(expected.allSatisfy { $0.errors > 0 && $0.clientErrors > 0 })
        let rows = try await Self.query(engine, dir)
        #expect(rows.count == expected.count)
        for (row, want) in zip(rows, expected) {
            #expect(row.method == want.method && row.route == want.route)
            #expect(row.count == want.count && row.errors == want.errors && row.clientErrors == want.clientErrors, "\(row) vs \(want)")
            for (got, wanted) in [(row.p50, want.p50), (row.p95, want.p95), (row.p99, want.p99)] {
                #expect(abs(got - wanted) <= 1e-6 * max(1, abs(wanted)), "\(row) vs \(want)")
            }
        }
    }
}
