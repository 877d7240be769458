import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("Who is affected and since when")
struct SessionsAffectedTests {
    @Test("sessions, first and last seen per identity, group and route, and the app-version table match Python over the same files")
    func matchesPython() async throws {
        let traces = try GeneratedTraces(events: 40_000, files: 4, seed: 5)
        let result = try await apitrace(["report", "--format", "json", "--by", "app_version", "--top-errors", "10000", traces.folder.path])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let python = try await pythonCounts(traces.paths)

        func sessions(_ value: Any?) -> (Int, Bool) {
            let o = value as? [String: Any]
            return ((o?["count"] as? Int) ?? -1, (o?["exact"] as? Bool) ?? false)
        }
        func check(_ label: String, _ got: (Int, Bool), _ want: Int) {
            if want <= SessionCount.exactLimit {
                #expect(got.0 == want && got.1, "\(label): \(got) sessions, Python \(want)")
            } else {
                #expect(!got.1 && abs(Double(got.0 - want)) / Double(want) < 3 * SessionCount.standardError, "\(label): \(got), Python \(want)")
            }
        }
        func ms(_ text: Any?) -> Int64? { (text as? String).flatMap { TraceTimestamp(rfc3339: $0)?.millisecondsSince1970 } }

        let errors = try #require(report["errors"] as? [[String: Any]])
        let wantErrors = try #require(python["errors"] as? [String: [String: Any]])
        #expect(errors.count == wantErrors.count)
        for row in errors {
            let key = "\(row["source"]!)|\(row["identity"]!)"
            let want = try #require(wantErrors[key], "\(key) not found by Python")
            check(key, sessions(row["sessions"]), want["sessions"] as! Int)
            #expect(ms(row["first_seen"]) == (want["first"] as? NSNumber)?.int64Value, "\(key) first seen")
            #expect(ms(row["last_seen"]) == (want["last"] as? NSNumber)?.int64Value, "\(key) last seen")
        }

        let decode = try #require(report["decode_failures"] as? [[String: Any]])
        let wantDecode = try #require(python["decode"] as? [String: [String: Any]])
        #expect(decode.count == wantDecode.count && !decode.isEmpty)
        for row in decode {
            let key = "\(row["entity"]!)|\(row["kind"]!)|\(row["path"]!)"
            let want = try #require(wantDecode[key], "\(key) not found by Python")
            check(key, sessions(row["sessions"]), want["sessions"] as! Int)
            #expect(ms(row["first_seen"]) == (want["first"] as? NSNumber)?.int64Value)
            #expect(ms(row["last_seen"]) == (want["last"] as? NSNumber)?.int64Value)
        }

        let routes = try #require(report["routes"] as? [[String: Any]])
        let wantRoutes = try #require(python["routes"] as? [String: [String: Int]])
        var withErrors = 0
        for row in routes where (row["requests"] as? Int ?? 0) > 0 {
            let key = "\(row["method"]!) \(row["route"]!)"
            let want = wantRoutes[key] ?? [:]
            check(key + " errors", sessions(row["sessions_with_errors"]), want["errors"] ?? 0)
            check(key + " 4xx", sessions(row["sessions_with_client_errors"]), want["client"] ?? 0)
            if (want["errors"] ?? 0) > 0 { withErrors += 1 }
        }
        #expect(withErrors > 0)

        let versions = try #require(report["app_versions"] as? [[String: Any]])
        let wantVersions = try #require(python["versions"] as? [String: [String: Any]])
        #expect(Set(versions.map { $0["app_version"] as! String }) == Set(wantVersions.keys))
        #expect(versions.count == 2)
        for row in versions {
            let version = row["app_version"] as! String
            let want = try #require(wantVersions[version])
            for field in ["files", "events", "requests", "errors", "client_errors", "decode_failures", "recorded_errors"] {
                #expect(row[field] as? Int == want[field] as? Int, "\(version) \(field): \(row[field] ?? "nil") vs Python \(want[field] ?? "nil")")
            }
            check(version, sessions(row["sessions_affected"]), want["sessions"] as! Int)
            #expect(ms(row["first_seen"]) == (want["first"] as? NSNumber)?.int64Value)
            #expect(ms(row["last_seen"]) == (want["last"] as? NSNumber)?.int64Value)
        }
    }

    @Test("--by app_version shows the table in every format", arguments: ["text", "markdown", "html", "json"])
    func everyFormat(_ format: String) async throws {
        let traces = try GeneratedTraces(events: 3000, files: 2, seed: 9)
        let with = try await apitrace(["report", "--format", format, "--by", "app_version", traces.folder.path])
        let without = try await apitrace(["report", "--format", format, traces.folder.path])
        #expect(with.status == 0 && without.status == 0)
        let marker = ["text": "BY APP VERSION", "markdown": "## By app version", "html": "<h2>By app version</h2>", "json": "\"app_version\": \"2.4.0\""][format]!
        #expect(with.stdout.contains(marker))
        #expect(with.stdout.contains("2.3.0") && with.stdout.contains("2.4.0"))
        #expect(!without.stdout.contains(marker))
    }

    @Test("--by with an unknown dimension is refused with a message naming it")
    func unknownDimension() async throws {
        let result = try await apitrace(["report", "--by", "country", "/tmp"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--by country"))
    }

    /// The same numbers computed by Python's gzip and json modules from the files, independently of Swift.
    private func pythonCounts(_ paths: [String]) async throws -> [String: Any] {
        let script = #"""
        import gzip, json, re, sys
        from datetime import datetime
        CANCELLED = {"URLError.cancelled", "CancellationError", "NSURLErrorDomain#-999"}
        OFFLINE = {"URLError.notConnectedToInternet", "URLError.dataNotAllowed", "URLError.internationalRoamingOff",
                   "URLError.callIsActive", "URLError.backgroundSessionWasDisconnected", "NSURLErrorDomain#-1009",
                   "NSURLErrorDomain#-1020", "NSURLErrorDomain#-1018", "NSURLErrorDomain#-1019", "NSURLErrorDomain#-997"}
        def ms(ts): return int(round(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000))
        def seen(d, key, t, session):
            e = d.setdefault(key, {"sessions": set(), "first": t, "last": t})
            e["first"] = min(e["first"], t); e["last"] = max(e["last"], t)
            if session is not None: e["sessions"].add(session)
        errors, decode, routes, versions = {}, {}, {}, {}
        for path in sys.argv[1:]:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                header = json.loads(f.readline())
                v = versions.setdefault(header.get("app_version", "-"), {"files": 0, "events": 0, "requests": 0, "errors": 0,
                    "client_errors": 0, "decode_failures": 0, "recorded_errors": 0, "sessions": set(), "first": None, "last": None})
                v["files"] += 1
                for line in f:
                    e = json.loads(line)
                    t, s, kind = ms(e["ts"]), e.get("session"), e["type"]
                    v["events"] += 1
                    v["first"] = t if v["first"] is None else min(v["first"], t)
                    v["last"] = t if v["last"] is None else max(v["last"], t)
                    if kind == "request":
                        v["requests"] += 1
                        status, err = e.get("status"), e.get("error")
                        if status is not None:
                            outcome = "success" if status < 400 else "client" if status < 500 else "errors"
                        else:
                            outcome = "cancelled" if err in CANCELLED else "offline" if err in OFFLINE else "errors"
                        r = routes.setdefault(e["method"] + " " + e["route"], {"errors": set(), "client": set()})
                        if outcome in ("errors", "client"):
                            v["errors" if outcome == "errors" else "client_errors"] += 1
                            if s is not None: r[outcome].add(s); v["sessions"].add(s)
                        if err is not None: seen(errors, "request|" + err, t, s)
                    elif kind == "error":
                        v["recorded_errors"] += 1 + e.get("suppressed", 0)
                        if s is not None: v["sessions"].add(s)
                        seen(errors, "recorded|" + e["identity"], t, s)
                    elif kind == "decode_failure":
                        v["decode_failures"] += 1
                        if s is not None: v["sessions"].add(s)
                        key = "|".join([e["entity"], e["kind"], re.sub(r"\[[0-9]+\]", "[*]", e.get("path", ""))])
                        seen(decode, key, t, s)
        def out(d): return {k: dict(v, sessions=len(v["sessions"])) for k, v in d.items()}
        json.dump({"errors": out(errors), "decode": out(decode), "versions": out(versions),
                   "routes": {k: {c: len(x) for c, x in v.items()} for k, v in routes.items()}}, sys.stdout)
        """#
        let folder = TemporaryDirectory()
        try script.write(toFile: folder.file("count.py"), atomically: true, encoding: .utf8)
        let out = try await runOffPool("/usr/bin/env", ["python3", folder.file("count.py")] + paths)
        #expect(out.status == 0, "\(String(decoding: out.stderr, as: UTF8.self))")
        let data = out.stdout
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
