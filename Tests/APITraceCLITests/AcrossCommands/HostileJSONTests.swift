import APITraceTestSupport
import Foundation
import Testing

/// JSON a hostile or merely unusual producer may write: escapes in keys and values (valid JSON that
/// means the plain text), bad escapes, lone surrogates, control characters, broken UTF-8, numbers with
/// leading zeros, malformed values in fields no reader uses, repeated keys. `report`, `export`,
/// `alert` and `cat` read the same folder and must agree with each other and with Python's `json`
/// module, the independent reader here: the same lines valid, the same requests and failures per route.
@Suite("report, export, alert and cat agree with Python's json on hostile JSON", .serialized)
struct HostileJSONTests {
    static let header = #"{"type":"header","format":"apitrace","version":1,"producer":"json","started":"2026-11-22T09:00:00.000Z"}"#

    /// `\uXXXX` for every character of `text`, so the key or value reads as `text` to any JSON reader.
    static func escaped(_ text: String) -> String {
        text.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined()
    }

    /// A request line from its fields written as raw JSON members.
    static func line(_ members: [String]) -> String { "{" + members.joined(separator: ",") + "}" }

    static func lines() -> [String] {
        var out: [String] = []
        var second = 0
        func ts() -> String { second += 1; return #""ts":"2026-11-22T09:\#(String(format: "%02d:%02d", second / 60, second % 60)).000Z""# }
        // Baseline traffic so every route has requests and failures in every reader.
        for route in ["/apps", "/news", "/feed"] {
            for status in [200, 200, 503] {
                out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"\#(route)""#, #""status":\#(status)"#, #""duration_ms":5"#]))
            }
        }
        // Each field readers use, its key written with escapes; then its value.
        let fields: [(String, String)] = [
            ("type", #""request""#), ("method", #""GET""#), ("route", #""/news""#), ("status", "200"), ("duration_ms", "7"),
        ]
        for (name, value) in fields {
            var members = [#""type":"request""#, ts(), #""method":"GET""#, #""route":"/news""#, #""status":503"#, #""duration_ms":7"#]
            let index = members.firstIndex { $0.hasPrefix("\"\(name)\"") }!
            members[index] = "\"\(escaped(name))\":\(value)"
            out.append(line(members))
            // A partial escape, as a producer that escapes only some characters writes it.
            members[index] = "\"\(name.dropLast())\(escaped(String(name.last!)))\":\(value)"
            out.append(line(members))
        }
        for (name, text) in [("type", "request"), ("method", "GET"), ("route", "/feed"), ("ts", "2026-11-22T09:30:00.000Z")] {
            var members = [#""type":"request""#, ts(), #""method":"GET""#, #""route":"/feed""#, #""status":503"#, #""duration_ms":3"#]
            let index = members.firstIndex { $0.hasPrefix("\"\(name)\"") }!
            members[index] = "\"\(name)\":\"\(escaped(text))\""
            out.append(line(members))
        }
        // Short escapes that decode to the plain route.
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"\/apps""#, #""status":503"#, #""duration_ms":4"#]))
        // Bad text in each string field readers use: invalid everywhere.
        let badTexts = [#"\x"#, #"\u12"#, #"\u12G4"#, #"\ud800"#, #"\udc00"#, #"\ud800\u0041"#, "\t", "\u{01}", "\u{1f}"]
        for bad in badTexts {
            for name in ["type", "route", "method", "ts"] {
                var members = [#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":3"#]
                let index = members.firstIndex { $0.hasPrefix("\"\(name)\"") }!
                let plain = members[index].dropLast()
                members[index] = plain + bad + "\""
                out.append(line(members))
            }
            // The same bad text in a key and in a field no reader uses.
            out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":3"#, "\"x\(bad)\":1"]))
            out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":3"#, "\"note\":\"\(bad)\""]))
        }
        // Malformed values in a field no reader uses, numbers JSON does not allow, text around the object.
        for extra in ["[1,,2]", #"{"a":1]"#, "[1 2]", #"{"a" 1}"#, "{,}", "[", "05", "-", "1.", ".5", "+1", "1e", "NaN", "Infinity", "tru", "nul", "0x10", #"{"a":[{"b":}]}"#] {
            out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":3"#, "\"extra\":\(extra)"]))
        }
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":03"#]))
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":0503"#, #""duration_ms":3"#]))
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":3"#]) + " x")
        // Valid but unusual: nested values in unused fields, whitespace, repeated keys (the last wins).
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""duration_ms":3"#, #""extra":{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}"#]))
        out.append(" \t" + line([#""type" : "request""#, ts(), #""method":"GET""#, #""route":"/news""#, #""status":503"#, #""duration_ms":3.5e0"#]) + " ")
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":503"#, #""route":"/feed""#, #""duration_ms":3"#, #""status":200"#]))
        out.append(line([#""type":"request""#, ts(), #""method":"GET""#, #""route":"/apps""#, #""status":200"#, #""duration_ms":3"#, #""status":503"#]))
        return out
    }

    /// Python's `json`, strict as RFC 8259 asks of interoperable text: UTF-8 only, no NaN or
    /// Infinity, no lone surrogates (which `json` would pass on as unpaired code points). Prints the
    /// valid line numbers, the count of invalid ones and, per route, requests and failures (status
    /// 500 and up, or no status); a request's `ts` must be an RFC 3339 instant, as the format asks.
    static let oracle = #"""
    import json, sys, datetime
    def text_ok(o):
        if isinstance(o, str): o.encode("utf-8")
        elif isinstance(o, dict): [text_ok(k) or text_ok(v) for k, v in o.items()]
        elif isinstance(o, list): [text_ok(v) for v in o]
    def no_constant(name): raise ValueError(name)
    def instant_ok(ts):
        t = datetime.datetime.fromisoformat(ts.replace("Z", "+00:00"))
        if len(ts) < 20 or ts[10] != "T" or t.tzinfo is None: raise ValueError(ts)
    valid, invalid, routes = [], 0, {}
    for number, raw in enumerate(open(sys.argv[1], "rb").read().split(b"\n"), 1):
        if number == 1 or not raw.strip(): continue
        try:
            o = json.loads(raw.decode("utf-8"), parse_constant=no_constant)
            text_ok(o)
            if o.get("type") == "request": instant_ok(o["ts"])
        except Exception:
            invalid += 1
            continue
        if o.get("type") != "request": continue
        valid.append(number)
        r = routes.setdefault(o["route"], [0, 0])
        r[0] += 1
        status = o.get("status")
        r[1] += 1 if status is None or status >= 500 else 0
    print(json.dumps({"valid": valid, "invalid": invalid, "routes": routes}))
    """#

    @Test("the same lines valid and the same requests and failures per route in every reader and in Python")
    func agree() async throws {
        let dir = TemporaryDirectory()
        let file = dir.path + "/20261122T090000Z-json-0001.jsonl"
        let lines = [Self.header] + Self.lines()
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let apitrace = try builtProduct("apitrace").path

        let python = try await runOffPool("/usr/bin/env", ["python3", "-c", Self.oracle, file])
        #expect(python.status == 0, "\(String(decoding: python.stderr, as: UTF8.self))")
        let expected = try JSONSerialization.jsonObject(with: python.stdout) as! [String: Any]
        let validNumbers = Set((expected["valid"] as! [Int]))
        var want: [String: [Double]] = [:]
        for (route, pair) in expected["routes"] as! [String: [Int]] { want[route] = pair.map(Double.init) }
        // The hostile lines must matter: many invalid, and escaped fields that count.
        #expect(validNumbers.count > 20 && lines.count - 1 - validNumbers.count > 40, "\(validNumbers.count) of \(lines.count - 1)")
        #expect(Set(want.keys) == ["/apps", "/news", "/feed"], "\(want)")

        // report
        let reportOut = try await runOffPool(apitrace, ["report", "--format", "json", dir.path])
        let report = try JSONSerialization.jsonObject(with: reportOut.stdout) as! [String: Any]
        var fromReport: [String: [Double]] = [:]
        for row in report["routes"] as! [[String: Any]] {
            fromReport[row["route"] as! String] = [(row["estimated_requests"] as! NSNumber).doubleValue, (row["errors"] as! NSNumber).doubleValue]
        }
        #expect(fromReport == want, "report \(fromReport) != python \(want)")

        // export
        let prom = String(decoding: try await runOffPool(apitrace, ["export", "--format", "prometheus", dir.path]).stdout, as: UTF8.self)
        var fromExport: [String: [Double]] = [:]
        for line in prom.split(separator: "\n") where line.hasPrefix("apitrace_http_client_requests_total{") {
            let route = String(line.split(separator: "url_template=\"")[1].prefix { $0 != "\"" })
            let outcome = String(line.split(separator: "outcome=\"")[1].prefix { $0 != "\"" })
            let value = Double(line.split(separator: " ").last!)!
            fromExport[route, default: [0, 0]][0] += value
            if outcome == "server_error" || outcome == "transport" { fromExport[route]![1] += value }
        }
        #expect(fromExport == want, "export \(fromExport) != python \(want)")

        // alert
        let rules = dir.path + "/rules.yaml"
        try """
            rules:
              - name: all
                slo: 0.99
                min_requests: 1
                confidence: none
                burn_rate: [{long: 1d, short: 1d, factor: 0.000001}]
                evidence_window: 1d
                notify: [hook]
            notifiers:
              hook: {type: webhook, url: "http://127.0.0.1:9/unused"}
            """.write(toFile: rules, atomically: true, encoding: .utf8)
        let alertOut = try await runOffPool(apitrace, ["alert", dir.path, "--rules", rules, "--state", dir.path + "/state.json", "--dry-run", "--now", "2026-11-22T09:31:00Z"])
        let alertText = String(decoding: alertOut.stdout, as: UTF8.self)
        let payloadLine = try #require(alertText.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("{") }, "\(alertText) \(String(decoding: alertOut.stderr, as: UTF8.self))")
        let payload = try JSONSerialization.jsonObject(with: Data(payloadLine.utf8)) as! [String: Any]
        var fromAlert: [String: [Double]] = [:]
        for row in (payload["evidence"] as! [String: Any])["top_failing_routes"] as! [[String: Any]] {
            fromAlert[row["route"] as! String] = [(row["requests"] as! NSNumber).doubleValue, (row["failures"] as! NSNumber).doubleValue]
        }
        #expect(fromAlert == want, "alert \(fromAlert) != python \(want)")

        // cat: exactly the valid lines, byte for byte, so `apitrace cat | jq` reads every line it prints;
        // each invalid line named in a warning.
        let catOut = try await runOffPool(apitrace, ["cat", "--no-headers", dir.path])
        let printed = String(decoding: catOut.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        let wantPrinted = validNumbers.sorted().map { lines[$0 - 1] }
        #expect(printed == wantPrinted, "cat printed \(printed.count) lines, python reads \(wantPrinted.count) valid")
        #expect(catOut.status == 1)
        // And jq, a third reader, takes every printed line (it stopped at the first bad one before).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/jq") {
            let jq = try await runOffPool("/usr/bin/jq", ["-c", ".route"], stdin: catOut.stdout)
            #expect(jq.status == 0, "\(String(decoding: jq.stderr, as: UTF8.self))")
            #expect(String(decoding: jq.stdout, as: UTF8.self).split(separator: "\n").count == wantPrinted.count)
        }
        let catWarnings = String(decoding: catOut.stderr, as: UTF8.self)
        #expect(catWarnings.contains("json-0001.jsonl:") && catWarnings.contains("more"), "\(catWarnings)")
        let invalidCount = expected["invalid"] as! Int
        #expect(catWarnings.contains("\(invalidCount - 20) more"), "the warnings count every skipped line (\(invalidCount)): \(catWarnings)")
    }
}
