import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// `apitrace report`'s WebSockets section, through the built executable, against an independent
/// count of the same files by a Python script (its own table of close-code classes, its own sums).
@Suite("apitrace report's WebSockets section")
struct ReportWebSocketTests {
    static func header(_ producer: String, _ started: String) -> String {
        #"{"type":"header","format":"apitrace","version":1,"producer":"\#(producer)","app":"Otec","app_version":"2.4.0","started":"\#(started)"}"#
    }

    /// A deterministic mix of what `APITraceWebSocket` writes: opens, connection ends with every
    /// class of code (and a few without one), failed attempts, reconnects, give-ups, unknown phases.
    static func webSocketLines(count: Int, seed: UInt64, minute: Int, routes: Int = 4) -> [String] {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let codes = [1000, 1000, 1001, 1006, 1006, 1006, 1011, 1012, 1008, 1009, 1005, 4003, 3001, 2999]
        let reasons = ["abnormal", "ping_timeout", "server_error", "going_away", "normal", "policy", "network_error", "brand-new-reason"]
        return (0..<count).map { i in
            let ts = String(format: "2026-11-25T14:%02d:%02d.%03dZ", minute, (i / 20) % 60, (i * 37) % 1000)
            let route = "/news/{id}/comments" + (routes > 1 ? "/\(next(routes))" : "")
            var line = #"{"type":"websocket","ts":"\#(ts)","route":"\#(route)","attempt":\#(1 + next(3))"#
            switch next(10) {
            case 0, 1, 2:
                line += #","phase":"open","duration_ms":\#(Double(next(90_000)) / 1000)"#
            case 3, 4, 5:
                let code = codes[next(codes.count)]
                line += #","phase":"close""# + (next(15) == 0 ? "" : #","code":\#(code)"#)
                line += #","reason":"\#(reasons[next(reasons.count)])","closed_by":"\#(["client", "server", "network"][next(3)])""#
                line += #","duration_ms":\#(Double(next(600_000_000)) / 1000),"messages_in":\#(next(500)),"messages_out":\#(next(20))"#
                line += #","bytes_in":\#(next(1_000_000)),"bytes_out":\#(next(5000)),"pings":\#(next(9)),"ping_rtt_ms":12.5"#
                line += #","silence_ms":\#(Double(next(40_000_000)) / 1000)"#
            case 6:
                line += #","phase":"close","code":1006,"reason":"\#(["refused", "network_error", "handshake_timeout"][next(3)])","closed_by":"network","duration_ms":\#(next(3000))"#
            case 7, 8:
                line += #","phase":"reconnect","delay_ms":\#(250 + next(30_000))"#
            default:
                line += next(2) == 0 ? #","phase":"fail","reason":"refused""# : #","phase":"handover""#
            }
            return line + "}"
        }
    }

    /// Counts the `websocket` lines of the `.jsonl` files in a folder as the report defines them.
    static let pythonCount = #"""
        import json, os, sys
        CLASSES = {1000: "normal", 1001: "going_away", 1002: "protocol_error", 1003: "unsupported_data", 1005: "no_status",
                   1006: "abnormal", 1007: "invalid_data", 1008: "policy", 1009: "message_too_big", 1010: "missing_extension",
                   1011: "server_error", 1012: "service_restart", 1013: "try_again_later", 1014: "bad_gateway", 1015: "tls_error"}
        def cls(code):
            if code in CLASSES: return CLASSES[code]
            if 3000 <= code <= 3999: return "library"
            if 4000 <= code <= 4999: return "application"
            return "other"
        out = dict(connections=0, closes=0, failed_attempts=0, abnormal_closes=0, reconnects=0, fails=0, connected_ms=0,
                   messages_in=0, messages_out=0, bytes_in=0, bytes_out=0, longest_silence_ms=None, by_code={}, by_reason={}, routes={})
        for name in sorted(os.listdir(sys.argv[1])):
            if not name.endswith(".jsonl"): continue
            for line in open(os.path.join(sys.argv[1], name), encoding="utf-8"):
                e = json.loads(line)
                if e.get("type") != "websocket": continue
                r = out["routes"].setdefault(e.get("route", ""), dict(connections=0, closes=0, abnormal_closes=0, reconnects=0, fails=0, messages_in=0))
                phase = e["phase"]
                if phase == "open":
                    out["connections"] += 1; r["connections"] += 1
                elif phase == "close":
                    out["closes"] += 1; r["closes"] += 1
                    code = e.get("code")
                    if code not in (1000, 1001):
                        out["abnormal_closes"] += 1; r["abnormal_closes"] += 1
                        key = "- none" if code is None else "%d %s" % (code, cls(code))
                        out["by_code"][key] = out["by_code"].get(key, 0) + 1
                        if "reason" in e: out["by_reason"][e["reason"]] = out["by_reason"].get(e["reason"], 0) + 1
                    if "messages_in" in e:
                        out["connected_ms"] += int(e["duration_ms"] + 0.5)
                        out["messages_in"] += e["messages_in"]; r["messages_in"] += e["messages_in"]
                    else:
                        out["failed_attempts"] += 1
                    for k in ("messages_out", "bytes_in", "bytes_out"): out[k] += e.get(k, 0)
                    if "silence_ms" in e:
                        s = int(e["silence_ms"] + 0.5)
                        out["longest_silence_ms"] = s if out["longest_silence_ms"] is None else max(out["longest_silence_ms"], s)
                elif phase == "reconnect":
                    out["reconnects"] += 1; r["reconnects"] += 1
                elif phase == "fail":
                    out["fails"] += 1; r["fails"] += 1
                    if "reason" in e: out["by_reason"][e["reason"]] = out["by_reason"].get(e["reason"], 0) + 1
        print(json.dumps(out))
        """#

    static func report(_ arguments: [String]) async throws -> ProcessResult {
        try await apitrace(["report"] + arguments)
    }

    @Test("every number of the section matches an independent Python count; no websocket line is an unknown type",
          .requires(.python3))
    func matchesPythonCount() async throws {
        let dir = TemporaryDirectory()
        // Three finished files and one still being written, so the cache holds some and not others.
        for (i, minute) in [10, 11, 12, 13].enumerated() {
            let lines = [Self.header("ws", "2026-11-25T14:\(minute):00.000Z")] + Self.webSocketLines(count: 700, seed: UInt64(i + 1), minute: minute)
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(
                to: URL(fileURLWithPath: dir.path + "/20261125T14\(minute)00Z-ws-000\(i + 1).jsonl"))
        }
        let script = dir.path + "/count.py"
        try Data(Self.pythonCount.utf8).write(to: URL(fileURLWithPath: script))
        let counted = try await runChild(try #require(OutsideTool.python3.path), [script, dir.path])
        try #require(counted.status == 0, "\(counted.stderr)")
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(counted.stdout.utf8)) as? [String: Any])

        let run = try await Self.report(["--no-cache", "--format", "json", dir.path])
        try #require(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let input = try #require(json["input"] as? [String: Any])
        #expect(input["unknown_types"] as? Int == 0)
        let ws = try #require(json["websocket"] as? [String: Any])
        for key in ["connections", "closes", "failed_attempts", "abnormal_closes", "reconnects", "fails", "connected_ms",
                    "messages_in", "messages_out", "bytes_in", "bytes_out", "longest_silence_ms"] {
            #expect(ws[key] as? Int == expected[key] as? Int, "\(key): report \(ws[key] ?? "nil"), Python \(expected[key] ?? "nil")")
        }
        let closes = try #require(expected["closes"] as? Int), abnormal = try #require(expected["abnormal_closes"] as? Int)
        #expect(closes > 500 && abnormal > 200 && abnormal < closes)
        #expect(abs((ws["abnormal_share"] as? Double ?? -1) - Double(abnormal) / Double(closes)) < 1e-6)
        func pairs(_ list: Any?, _ key: String) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: ((list as? [[String: Any]]) ?? []).map { ($0[key] as! String, $0["count"] as! Int) })
        }
        #expect(pairs(ws["abnormal_by_code"], "code") == expected["by_code"] as? [String: Int])
        #expect(pairs(ws["abnormal_by_reason"], "reason") == expected["by_reason"] as? [String: Int])
        let routes = try #require(ws["routes"] as? [[String: Any]])
        let expectedRoutes = try #require(expected["routes"] as? [String: [String: Int]])
        #expect(routes.count == expectedRoutes.count)
        for row in routes {
            let name = try #require(row["route"] as? String)
            for key in ["connections", "closes", "abnormal_closes", "reconnects", "fails", "messages_in"] {
                #expect(row[key] as? Int == expectedRoutes[name]?[key], "\(name) \(key)")
            }
        }

        // Every format carries the section, and the cache changes none of them.
        for format in ["text", "json", "markdown", "html"] {
            let cache = dir.path + "/cache-\(format)"
            let arguments = ["--format", format, "--cache-dir", cache, dir.path]
            let uncached = try await Self.report(["--no-cache"] + arguments)
            let cold = try await Self.report(arguments)
            let warm = try await Self.report(arguments)
            #expect(uncached.status == 0)
            #expect(cold.stdout == uncached.stdout, "\(format): the cold run differs")
            #expect(warm.stdout == uncached.stdout, "\(format): the warm run differs")
            let title = ["text": "WEBSOCKETS", "json": "\"websocket\"", "markdown": "## WebSockets", "html": "<h2>WebSockets</h2>"][format]!
            #expect(uncached.stdout.contains(title), "\(format)")
            #expect(uncached.stdout.contains("1006 abnormal"), "\(format)")
        }
    }

    @Test("hostile websocket lines (codes out of range, 300,000 distinct routes, reasons and codes) keep the report bounded and exact")
    func hostileLinesStayBounded() async throws {
        let dir = TemporaryDirectory()
        let distinct = 300_000
        let bad = [
            #"{"type":"websocket","ts":"2026-11-25T14:00:01.000Z","phase":"close","route":"/x","code":70000}"#,
            #"{"type":"websocket","ts":"2026-11-25T14:00:01.000Z","phase":"close","route":"/x","code":-1}"#,
            #"{"type":"websocket","ts":"2026-11-25T14:00:01.000Z","phase":"close","route":"/x","code":1e300}"#,
            #"{"type":"websocket","ts":"2026-11-25T14:00:01.000Z","phase":"close","route":"/x","code":9223372036854775808}"#,
            #"{"type":"websocket","ts":"2026-11-25T14:00:01.000Z","route":"/x","code":1006}"#,
        ]
        // 57 MB of text built and gzipped on a thread of its own: not on the two threads every suite's awaits share.
        let path = dir.path + "/20261125T140000Z-evil-0001.jsonl.gz"
        try await offPool {
            var text = Self.header("evil", "2026-11-25T14:00:00.000Z") + "\n"
            text.reserveCapacity(distinct * 190)
            for i in 0..<distinct {
                text += #"{"type":"websocket","ts":"2026-11-25T14:00:00.000Z","phase":"close","route":"/r/\#(i)","code":\#(i % 65_536),"reason":"why-\#(i)-\#(String(repeating: "x", count: i % 1000 == 0 ? 2000 : i % 40))","closed_by":"server","duration_ms":1,"messages_in":1}"#
                text += "\n"
            }
            text += bad.joined(separator: "\n") + "\n"
            try writeGzip(text, to: path)
        }
        try writeGzip(Self.header("evil", "2026-11-25T15:00:00.000Z") + "\n", to: dir.path + "/20261125T150000Z-evil-0002.jsonl.gz")

        let cache = dir.path + "/cache"
        let run = try await apitraceBounded(["report", "--format", "json", "--cache-dir", cache, dir.path], memoryMB: 1024, wallSeconds: 300)
        try #require(run.result.status == 0, "\(run.result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.result.stdout.utf8)) as? [String: Any])
        let ws = try #require(json["websocket"] as? [String: Any])
        // Counts stay exact; keys taken from the file are bounded.
        #expect(ws["closes"] as? Int == distinct)
        #expect(ws["abnormal_closes"] as? Int == distinct - 2 * 5)  // 1000 and 1001 appear 5 times each in 0..<300,000 mod 65,536
        let codes = try #require(ws["abnormal_by_code"] as? [[String: Any]])
        let reasons = try #require(ws["abnormal_by_reason"] as? [[String: Any]])
        #expect(codes.count <= 100 && reasons.count <= 100)
        #expect(codes.contains { $0["code"] as? String == "(other)" })
        #expect(reasons.contains { $0["code"] == nil && $0["reason"] as? String == "(other)" })
        #expect(codes.reduce(0) { $0 + ($1["count"] as! Int) } == distinct - 10)
        let routes = try #require(ws["routes"] as? [[String: Any]])
        #expect(routes.count <= 20)
        let omitted = try #require(ws["routes_omitted"] as? Int)
        #expect(omitted + routes.count <= 2001)
        // Every bad line is named in a warning and counted as invalid, none as an unknown type.
        let input = try #require(json["input"] as? [String: Any])
        #expect(input["invalid_lines"] as? Int == bad.count)
        #expect(input["unknown_types"] as? Int == 0)
        #expect(run.result.stderr.contains("code"), "\(run.result.stderr.prefix(2000))")
        #expect(run.peakMB < 1024)
        // The cached run says the same, byte for byte.
        let warm = try await apitrace(["report", "--format", "json", "--cache-dir", cache, dir.path])
        let uncached = try await apitrace(["report", "--format", "json", "--no-cache", dir.path])
        #expect(warm.stdout == run.result.stdout)
        #expect(uncached.stdout == run.result.stdout)
        // Every human format stays a page long (reasons are clipped, routes and keys listed in bounded numbers).
        for format in ["text", "markdown", "html"] {
            let rendered = try await apitrace(["report", "--no-cache", "--format", format, dir.path])
            #expect(rendered.stdout.utf8.count < 40_000, "the \(format) report grew with the file: \(rendered.stdout.utf8.count) bytes")
        }
    }
}
