import APITraceTestSupport
import Foundation
import Testing

/// `report`, `alert` and `export` read the same folder through one reading layer and must mean the
/// same thing: per route, the same requests (sampled successes weighted, client-side outcomes left
/// out) and the same API failures, equal to a count made here from the lines written.
@Suite("report, alert and export agree")
struct ReadersAgreeTests {
    struct Expected { var requests = 0.0; var failures = 0 }

    /// Realistic client traffic: sampled successes, 4xx, 5xx, timeouts, cancels, offline, a poisoned rate.
    static func writeFolder(_ dir: String) throws -> (perRoute: [String: Expected], cancelled: Int, offline: Int) {
        var expected: [String: Expected] = [:]
        var clientSide = (cancelled: 0, offline: 0)
        let routes = ["/apps", "/apps/{id}", "/news", "/newspapers"]
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"agree","started":"2026-11-22T09:00:00.000Z"}"#]
        var rng = UInt64(7)
        func next() -> UInt64 { rng = rng &* 6364136223846793005 &+ 1442695040888963407; return rng >> 33 }
        for i in 0..<3000 {
            let route = routes[Int(next() % 4)]
            let ts = String(format: "2026-11-22T09:%02d:%02d.%03dZ", (i / 60) % 60, i % 60, Int(next() % 1000))
            var fields = #""method":"GET","route":"\#(route)","duration_ms":\#(next() % 900)"#
            let roll = next() % 100
            var e = expected[route] ?? Expected()
            switch roll {
            case 0..<50: fields += #","status":200,"sample_rate":0.25"#; e.requests += 4
            case 50..<60: fields += #","status":200"#; e.requests += 1
            case 60..<66: fields += #","status":404"#; e.requests += 1
            case 66..<72: fields += #","status":503"#; e.requests += 1; e.failures += 1
            case 72..<76: fields += #","error":"URLError.timedOut""#; e.requests += 1; e.failures += 1
            case 76..<86: fields += #","error":"URLError.cancelled""#; clientSide.cancelled += 1
            case 86..<94: fields += #","error":"URLError.notConnectedToInternet""#; clientSide.offline += 1
            case 94..<96: fields += #","error":"CancellationError""#; clientSide.cancelled += 1
            default: fields += #","status":500,"sample_rate":0.000000001"#; e.requests += 1; e.failures += 1  // a failure is never sampled
            }
            expected[route] = e
            lines.append(#"{"type":"request","ts":"\#(ts)",\#(fields)}"#)
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/20261122T090000Z-agree-0001.jsonl"))
        return (expected, clientSide.cancelled, clientSide.offline)
    }

    @Test("per route: the same requests and API failures from report JSON, alert evidence and the OpenMetrics export")
    func agree() async throws {
        let dir = TemporaryDirectory()
        let (expected, cancelled, offline) = try Self.writeFolder(dir.path)
        let apitrace = try builtProduct("apitrace").path

        let reportOut = try await runOffPool(apitrace, ["report", "--format", "json", dir.path])
        let report = try JSONSerialization.jsonObject(with: reportOut.stdout) as! [String: Any]
        // Client-side outcomes are shown apart, in no rate.
        let totals = report["totals"] as! [String: Any]
        #expect(totals["cancelled"] as? Int == cancelled && totals["offline"] as? Int == offline && cancelled > 0 && offline > 0, "\(totals)")
        var fromReport: [String: Expected] = [:]
        for row in report["routes"] as! [[String: Any]] {
            fromReport[row["route"] as! String] = Expected(requests: (row["estimated_requests"] as! NSNumber).doubleValue, failures: row["errors"] as! Int)
        }

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
        let alertOut = try await runOffPool(apitrace, ["alert", dir.path, "--rules", rules, "--state", dir.path + "/state.json", "--dry-run", "--now", "2026-11-22T09:50:00Z"])
        let alertText = String(decoding: alertOut.stdout, as: UTF8.self)
        let payloadLine = try #require(alertText.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("{") }, "\(alertText) \(String(decoding: alertOut.stderr, as: UTF8.self))")
        let payload = try JSONSerialization.jsonObject(with: Data(payloadLine.utf8)) as! [String: Any]
        var fromAlert: [String: Expected] = [:]
        for row in (payload["evidence"] as! [String: Any])["top_failing_routes"] as! [[String: Any]] {
            fromAlert[row["route"] as! String] = Expected(requests: (row["requests"] as! NSNumber).doubleValue, failures: (row["failures"] as! NSNumber).intValue)
        }

        let prom = String(decoding: try await runOffPool(apitrace, ["export", "--format", "prometheus", dir.path]).stdout, as: UTF8.self)
        var fromExport: [String: Expected] = [:]
        for line in prom.split(separator: "\n") where line.hasPrefix("apitrace_http_client_requests_total{") {
            let route = String(line.split(separator: "url_template=\"")[1].prefix { $0 != "\"" })
            let outcome = String(line.split(separator: "outcome=\"")[1].prefix { $0 != "\"" })
            let value = Double(line.split(separator: " ").last!)!
            guard outcome != "cancelled", outcome != "offline" else { continue }
            fromExport[route, default: Expected()].requests += value
            if outcome == "server_error" || outcome == "transport" { fromExport[route]!.failures += Int(value) }
        }

        for (route, want) in expected {
            for (name, got) in [("report", fromReport[route]), ("alert", fromAlert[route]), ("export", fromExport[route])] {
                let got = try #require(got, "\(name) has no \(route)")
                #expect(abs(got.requests - want.requests) < 1e-6, "\(name) \(route) requests \(got.requests) != \(want.requests)")
                #expect(got.failures == want.failures, "\(name) \(route) failures \(got.failures) != \(want.failures)")
            }
        }
    }
}
