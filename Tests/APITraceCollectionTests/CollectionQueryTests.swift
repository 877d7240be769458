import APITraceTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Testing

/// The documented DuckDB and ClickHouse (chdb) queries of Docs/sql, run by python3 over a folder the
/// collector filled, checked against a computation in Swift over the same events.
@Suite("Per-route SQL over the collector's folder")
struct CollectionQueryTests {
    struct Row: Equatable, CustomStringConvertible {
        var method, route: String
        var count, errors, clientErrors: Int
        var p50, p95, p99: Double
        var description: String { "\(method) \(route) n=\(count) err=\(errors) 4xx=\(clientErrors) p50=\(p50) p95=\(p95) p99=\(p99)" }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Fills a collector folder through the collector itself: files over two days, with non-request events mixed in.
    static func fillFolder(_ dir: TemporaryDirectory) throws {
        let collector = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        for i in 0..<6 {
            let started = TraceFiles.day.adding(milliseconds: Int64(i) * 4 * 3_600_000)
            var events = TraceFiles.requests(400 + i * 37, seed: i, start: started)
            events.insert(TraceEvent(timestamp: started, .log(.init(level: "info", message: "m", metadata: ["k": "v"]))), at: 3)
            events.append(TraceEvent(timestamp: started, .sse(.init(phase: .init(rawValue: "open"), route: "/v1/orders", status: 500, durationMs: 99_999))))
            let bytes = TraceFiles.make(producer: "q\(i)", started: started, events: events)
            let reply = bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }
            #expect(reply.status == 201)
        }
        #expect(Set(TraceFiles.allFiles(under: dir.path).map { $0.prefix(13) }).count == 2, "two day folders")
    }

    /// The per-route table computed in Swift: errors = no status or 5xx, client errors = 4xx, linear-interpolated percentiles.
    static func expected(_ dir: TemporaryDirectory) -> [Row] {
        var groups: [String: (method: String, route: String, durations: [Double], errors: Int, client: Int)] = [:]
        for relative in TraceFiles.allFiles(under: dir.path) {
            _ = TraceFileReader(path: dir.file(relative)).forEachEvent { event in
                guard case .request(let r) = event.payload else { return }
                var g = groups[r.method + " " + r.route] ?? (r.method, r.route, [], 0, 0)
                g.durations.append(r.durationMs)
                if r.status == nil || r.status! >= 500 { g.errors += 1 }
                if let s = r.status, (400..<500).contains(s) { g.client += 1 }
                groups[r.method + " " + r.route] = g
            }
        }
        func quantile(_ sorted: [Double], _ q: Double) -> Double {
            let position = Double(sorted.count - 1) * q
            let low = Int(position.rounded(.down)), high = min(low + 1, sorted.count - 1)
            return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
        }
        return groups.values.map { g in
            let s = g.durations.sorted()
            return Row(method: g.method, route: g.route, count: s.count, errors: g.errors, clientErrors: g.client,
                       p50: quantile(s, 0.5), p95: quantile(s, 0.95), p99: quantile(s, 0.99))
        }.sorted { ($0.count, $1.method, $1.route) > ($1.count, $0.method, $0.route) }
    }

    static func query(_ engine: String, _ dir: TemporaryDirectory) async throws -> [Row] {
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
            return Row(method: o["method"] as! String, route: o["route"] as! String, count: int("count"), errors: int("errors"),
                       clientErrors: int("client_errors"), p50: dbl("p50_ms"), p95: dbl("p95_ms"), p99: dbl("p99_ms"))
        }
    }

    @Test("DuckDB and ClickHouse give the Swift computation's counts exactly and its percentiles within 1e-6", arguments: ["duckdb", "clickhouse"])
    func agrees(engine: String) async throws {
        let dir = TemporaryDirectory()
        try Self.fillFolder(dir)
        let expected = Self.expected(dir)
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

    @Test("apitrace report over the same partitioned folder gives the same per-route table")
    func reportAgrees() async throws {
        let dir = TemporaryDirectory()
        try Self.fillFolder(dir)
        let expected = Self.expected(dir)
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
