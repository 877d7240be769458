import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// `apitrace report --baseline` through the built binary: a release that breaks one route is named
/// as what accounts for the extra failures, every number agrees with Python's computation of the
/// documented definition over the same files, and the edges (empty baseline, no failures, a
/// hostile number of routes, bad selectors) give clear, bounded answers.
@Suite("report --compare and --baseline")
struct CompareReportTests {
    static func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let out = try await runOffPool(try builtProduct("apitrace").path, arguments)
        return (out.status, String(decoding: out.stdout, as: UTF8.self), String(decoding: out.stderr, as: UTF8.self))
    }

    static func json(_ arguments: [String]) async throws -> [String: Any] {
        let out = try await run(["report", "--format", "json"] + arguments)
        #expect(out.status == 0, "\(out.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        return try #require(report["comparison"] as? [String: Any], "no comparison in the report")
    }

    /// Equal as far as the report's JSON prints numbers (six significant digits).
    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return false }
        return abs(a - b) <= 1e-5 * max(1, abs(a), abs(b))
    }

    /// Every listed row, every total and the order agree with Python.
    static func expectAgrees(_ comparison: [String: Any], _ python: [String: Any]) {
        let window = comparison["window"] as? [String: Any], baseline = comparison["baseline"] as? [String: Any]
        let pw = python["window"] as? [Double] ?? [], pb = python["baseline"] as? [Double] ?? []
        #expect(close(window?["requests"] as? Double, pw.first) && close(window?["failures"] as? Double, pw.last), "window \(window ?? [:]) vs Python \(pw)")
        #expect(close(baseline?["requests"] as? Double, pb.first) && close(baseline?["failures"] as? Double, pb.last), "baseline \(baseline ?? [:]) vs Python \(pb)")
        #expect(close(comparison["excess_failures"] as? Double, python["excess"] as? Double))
        let dims = python["dims"] as? [String: [String: [String: Double]]] ?? [:]
        let rankings = comparison["dimensions"] as? [[String: Any]] ?? []
        #expect(rankings.count == 7)
        for ranking in rankings {
            let dimension = ranking["dimension"] as? String ?? "?"
            let want = dims[dimension] ?? [:]
            let rows = ranking["rows"] as? [[String: Any]] ?? []
            #expect(rows.count + (ranking["rows_omitted"] as? Int ?? -1) == want.count, "\(dimension): \(rows.count) listed + omitted vs Python's \(want.count) rows in excess")
            var listed = Set<String>()
            for row in rows {
                let value = row["value"] as? String ?? "?"
                let key = dimension == "app_version_route" ? value + "\t" + (row["route"] as? String ?? "-") : value
                listed.insert(key)
                guard let p = want[key] else { Issue.record("\(dimension) \(key): not in excess for Python"); continue }
                for (field, pf) in [("window_requests", "wr"), ("window_failures", "wf"), ("baseline_requests", "br"), ("baseline_failures", "bf"),
                                    ("expected_failures", "expected"), ("excess_failures", "excess"), ("share", "share")] {
                    #expect(close(row[field] as? Double, p[pf]), "\(dimension) \(key) \(field): \(row[field] ?? "nil") vs Python \(p[pf] ?? -1)")
                }
            }
            // Ranked by excess: nothing left out has more than the last one listed.
            let lowest = rows.compactMap { $0["excess_failures"] as? Double }.min() ?? .infinity
            let highestLeftOut = want.filter { !listed.contains($0.key) }.map { $0.value["excess"] ?? 0 }.max() ?? 0
            #expect(highestLeftOut <= lowest + 1e-9, "\(dimension): a row with \(highestLeftOut) excess was left out below \(lowest)")
        }
    }

    @Test("--since 1h --baseline 24h names 2.4.0 on /apps/{id}, and every row agrees with Python")
    func releaseBreaksOneRoute() async throws {
        let dir = TemporaryDirectory()
        let files = try await offPool { try ReleaseTraffic.write(to: dir.path) }
        let since = ReleaseTraffic.iso(ReleaseTraffic.release), until = ReleaseTraffic.iso(ReleaseTraffic.end)
        let comparison = try await Self.json(["--since", since, "--until", until, "--baseline", "24h", "--compare-rows", "1000", dir.path])
        let python = try await PythonComparison.run(
            files: files, window: .init(since: ReleaseTraffic.release, until: ReleaseTraffic.end),
            baseline: .init(since: ReleaseTraffic.release - 24 * ReleaseTraffic.hour, until: ReleaseTraffic.release))
        Self.expectAgrees(comparison, python)

        // The known answer.
        let headline = try #require(comparison["headline"] as? [String: Any])
        let row = try #require(headline["row"] as? [String: Any])
        #expect(row["dimension"] as? String == "app_version_route" && row["value"] as? String == "2.4.0" && row["route"] as? String == "/apps/{id}")
        #expect((row["share"] as? Double ?? 0) > 0.8, "\(row)")
        #expect((headline["sentence"] as? String ?? "").hasSuffix("of the extra failures: /apps/{id} on app 2.4.0"))
        let dims = Dictionary(uniqueKeysWithValues: (comparison["dimensions"] as? [[String: Any]] ?? []).map { ($0["dimension"] as? String ?? "", $0) })
        func top(_ d: String) -> String? { ((dims[d]?["rows"] as? [[String: Any]])?.first)?["value"] as? String }
        #expect(top("route") == "/apps/{id}")
        #expect(top("app_version") == "2.4.0")
        #expect(top("error_identity") == "HTTP 503")
        #expect(top("decode_path") == "Review items[*].rating")
        #expect(top("outcome") == "server_error")
        #expect(top("host") == "api.example.com")

        // The text format says it in words.
        let text = try await Self.run(["report", "--since", since, "--until", until, "--baseline", "24h", dir.path])
        #expect(text.status == 0)
        #expect(text.stdout.contains("COMPARED WITH BASELINE") && text.stdout.contains("of the extra failures: /apps/{id} on app 2.4.0"), "\(text.stdout)")
    }

    @Test("--compare app_version=2.4.0 --baseline app_version=2.3.1 over the same hour agrees with Python")
    func versionAgainstVersion() async throws {
        let dir = TemporaryDirectory()
        let files = try await offPool { try ReleaseTraffic.write(to: dir.path) }
        let comparison = try await Self.json([
            "--since", ReleaseTraffic.iso(ReleaseTraffic.release), "--until", ReleaseTraffic.iso(ReleaseTraffic.end),
            "--compare", "app_version=2.4.0", "--baseline", "app_version=2.3.1", "--compare-rows", "1000", dir.path,
        ])
        let python = try await PythonComparison.run(
            files: files, window: .init(since: ReleaseTraffic.release, until: ReleaseTraffic.end, app_version: "2.4.0"),
            baseline: .init(since: ReleaseTraffic.release, until: ReleaseTraffic.end, app_version: "2.3.1"))
        Self.expectAgrees(comparison, python)
        let row = (comparison["headline"] as? [String: Any])?["row"] as? [String: Any]
        #expect(row?["route"] as? String == "/apps/{id}" && row?["expectation"] as? String == "route", "\(row ?? [:])")
        let selection = (comparison["window"] as? [String: Any])?["selection"] as? String
        #expect(selection?.contains("app_version=2.4.0") == true, "\(selection ?? "none")")
    }

    @Test("the comparison is in every format", arguments: ["text", "markdown", "html", "json"])
    func everyFormat(_ format: String) async throws {
        let dir = TemporaryDirectory()
        try await offPool { try ReleaseTraffic.write(to: dir.path) }
        let out = try await Self.run([
            "report", "--format", format, "--since", ReleaseTraffic.iso(ReleaseTraffic.release), "--until", ReleaseTraffic.iso(ReleaseTraffic.end),
            "--baseline", "24h", dir.path,
        ])
        #expect(out.status == 0, "\(out.stderr)")
        let marker = ["text": "COMPARED WITH BASELINE", "markdown": "## Compared with baseline", "html": "<h2 id=\"compare\">Compared with baseline</h2>",
                      "json": "\"comparison\": {"][format]!
        #expect(out.stdout.contains(marker))
        #expect(out.stdout.contains("/apps/{id}") && out.stdout.contains("2.4.0"))
        #expect(out.stdout.contains("of the extra failures"))
    }

    @Test("an empty baseline expects no failures: every window failure is extra, and Python agrees")
    func emptyBaseline() async throws {
        let dir = TemporaryDirectory()
        let files = try await offPool { try ReleaseTraffic.write(to: dir.path) }
        let comparison = try await Self.json([
            "--since", ReleaseTraffic.iso(ReleaseTraffic.release), "--until", ReleaseTraffic.iso(ReleaseTraffic.end),
            "--baseline", "2020-01-01T00:00:00Z..2020-01-02T00:00:00Z", "--compare-rows", "1000", dir.path,
        ])
        #expect(comparison["baseline_has_traffic"] as? Bool == false)
        let failures = (comparison["window"] as? [String: Any])?["failures"] as? Double
        #expect(Self.close(comparison["excess_failures"] as? Double, failures))
        let python = try await PythonComparison.run(
            files: files, window: .init(since: ReleaseTraffic.release, until: ReleaseTraffic.end),
            baseline: .init(since: 1_577_836_800_000, until: 1_577_923_200_000))
        Self.expectAgrees(comparison, python)
        let text = try await Self.run(["report", "--since", ReleaseTraffic.iso(ReleaseTraffic.release), "--baseline", "2020-01-01T00:00:00Z..2020-01-02T00:00:00Z", dir.path])
        #expect(text.stdout.contains("the baseline holds no requests"))
    }

    @Test("a window without failures has no extra failures and no headline")
    func noFailures() async throws {
        let dir = TemporaryDirectory()
        try await offPool { try ReleaseTraffic.write(to: dir.path, shape: .init(brokenAppsShare: 0, reviewDecodeShare: 0, noise: 0)) }
        let args = ["--since", ReleaseTraffic.iso(ReleaseTraffic.release), "--until", ReleaseTraffic.iso(ReleaseTraffic.end), "--baseline", "24h", dir.path]
        let comparison = try await Self.json(args)
        #expect(comparison["excess_failures"] as? Double == 0)
        #expect(comparison["headline"] is NSNull)
        for ranking in comparison["dimensions"] as? [[String: Any]] ?? [] { #expect((ranking["rows"] as? [Any])?.isEmpty == true) }
        for format in ["text", "markdown", "html"] {
            let out = try await Self.run(["report", "--format", format] + args)
            #expect(out.stdout.lowercased().contains("no row has more failures than its baseline predicts"), "\(format)")
        }
    }

    @Test("thousands of hostile routes stay bounded and escaped in every format")
    func hostileCardinality() async throws {
        let dir = TemporaryDirectory()
        let start = ReleaseTraffic.release - 2 * ReleaseTraffic.hour
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"h0000001","app_version":"9.9","started":"\#(ReleaseTraffic.iso(start))"}"#]
        for i in 0..<600 { lines.append(#"{"type":"request","ts":"\#(ReleaseTraffic.iso(start + Int64(i) * 6000))","method":"GET","route":"/ok","status":200,"duration_ms":5}"#) }
        for i in 0..<5000 {
            let route = i == 0 ? "<script>alert(1)</script>\\u001b[31m|`x`" : "/r/\(i)"
            lines.append(#"{"type":"request","ts":"\#(ReleaseTraffic.iso(ReleaseTraffic.release + Int64(i) * 500))","method":"GET","route":"\#(route)","status":500,"error":"E\#(i)","duration_ms":5}"#)
        }
        let name = "20261122T090000Z-h0000001-0001.jsonl.gz"
        try Data(try GzipDeflater.compress(Array((lines.joined(separator: "\n") + "\n").utf8))).write(to: URL(fileURLWithPath: dir.file(name)))
        let args = ["--since", ReleaseTraffic.iso(ReleaseTraffic.release), "--until", ReleaseTraffic.iso(ReleaseTraffic.end), "--baseline", "2h", dir.path]
        let comparison = try await Self.json(args)
        for ranking in comparison["dimensions"] as? [[String: Any]] ?? [] {
            let listed = (ranking["rows"] as? [Any])?.count ?? 0
            #expect(listed <= 5)
            // At most 999 distinct rows and one (other) per dimension.
            #expect(listed + (ranking["rows_omitted"] as? Int ?? 0) <= 1000)
        }
        #expect(Self.close((comparison["window"] as? [String: Any])?["failures"] as? Double, 5000))
        let html = try await Self.run(["report", "--format", "html", "--compare-rows", "1000"] + args)
        #expect(!html.stdout.contains("<script>") && html.stdout.contains("&lt;script&gt;"))
        let text = try await Self.run(["report", "--compare-rows", "1000"] + args)
        #expect(!text.stdout.contains("\u{1B}"))
        // In Markdown the route stays inside a code span, where renderers show `<` as text.
        let markdown = try await Self.run(["report", "--format", "markdown", "--compare-rows", "1000"] + args)
        #expect(!markdown.stdout.contains("\u{1B}"))
        let scripts = markdown.stdout.split(separator: "\n").filter { $0.contains("<script>") }
        #expect(!scripts.isEmpty && scripts.allSatisfy { $0.contains("`` <script>") || $0.contains("``<script>") }, "\(scripts.prefix(3))")
    }

    @Test("bad selectors are refused with a message naming the option", arguments: [
        (["--baseline", "24h"], "--since"),
        (["--since", "1h", "--baseline", "yesterday"], "--baseline yesterday"),
        (["--since", "1h", "--baseline", "app_version="], "app_version= needs a version"),
        (["--compare", "app_version=2.4.0"], "also give --baseline"),
        (["--since", "1h", "--baseline", "2h..3h"], "the range is empty"),
    ])
    func badSelectors(_ arguments: [String], _ message: String) async throws {
        let out = try await Self.run(["report"] + arguments + ["/tmp"])
        #expect(out.status == 64)
        #expect(out.stderr.contains(message), "\(out.stderr)")
    }
}
