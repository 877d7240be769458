import APITraceTestSupport
import APITraceCollector
import APITraceFormat
import Foundation
import Testing

/// The documented per-app-version queries (Docs/sql/per-app-version.*.sql), which join each request
/// to its file's header, against a count in Swift over the same folder.
@Suite("Per-app-version SQL over the collector's folder")
struct AppVersionQueryTests {
    static let versions = ["2.0", "2.1", "2.1", "2.2", "2.0", "2.1"]

    static func fillFolder(_ dir: TemporaryDirectory) throws {
        let collector = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        for (i, version) in versions.enumerated() {
            let started = TraceFiles.day.adding(milliseconds: Int64(i) * 5 * 3_600_000)
            var out = JSONOutput()
            TraceFileHeader(producer: "v\(i)", app: "Otec", appVersion: version, started: started).encode(to: &out)
            out.bytes.append(0x0A)
            for event in TraceFiles.requests(300 + i * 50, seed: i + 10, start: started) {
                event.encode(to: &out)
                out.bytes.append(0x0A)
            }
            let bytes = try GzipDeflater.compress(out.bytes)
            let reply = bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }
            #expect(reply.status == 201)
        }
    }

    struct Counts: Equatable { var count = 0, errors = 0, clientErrors = 0 }

    static func expected(_ dir: TemporaryDirectory) -> [String: Counts] {
        var byVersion: [String: Counts] = [:]
        for relative in TraceFiles.allFiles(under: dir.path) {
            var version = ""
            _ = TraceFileReader(path: dir.file(relative)).forEachLine { line, _ in
                switch line {
                case .header(let header): version = header.appVersion ?? ""
                case .event(let event):
                    guard case .request(let r) = event.payload else { return }
                    byVersion[version, default: Counts()].count += 1
                    if r.status == nil || r.status! >= 500 { byVersion[version, default: Counts()].errors += 1 }
                    if let s = r.status, (400..<500).contains(s) { byVersion[version, default: Counts()].clientErrors += 1 }
                default: break
                }
            }
        }
        return byVersion
    }

    @Test("DuckDB and ClickHouse count requests, errors and client errors per app version as Swift does", .requires(.duckdb, .chdb), arguments: ["duckdb", "clickhouse"])
    func agrees(engine: String) async throws {
        let dir = TemporaryDirectory()
        try Self.fillFolder(dir)
        let expected = Self.expected(dir)
        #expect(expected.keys.sorted() == ["2.0", "2.1", "2.2"])
        let sqlFile = CollectionQueryTests.packageRoot + "/Docs/sql/per-app-version.\(engine).sql"
        let result = try await runOffPool("/usr/bin/env", ["python3", CollectionQueryTests.packageRoot + "/Scripts/query-traces.py", engine, sqlFile, dir.path])
        try #require(result.status == 0, "python3 \(engine) query failed: \(String(decoding: result.stderr, as: UTF8.self)) — install the engines with Scripts/install-test-deps.sh")
        var got: [String: Counts] = [:]
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") {
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            func int(_ k: String) -> Int { (o[k] as? NSNumber)?.intValue ?? Int(o[k] as? String ?? "") ?? -1 }
            #expect(o["app"] as? String == "Otec")
            got[o["app_version"] as? String ?? "?"] = Counts(count: int("count"), errors: int("errors"), clientErrors: int("client_errors"))
        }
        #expect(got == expected)
    }
}
