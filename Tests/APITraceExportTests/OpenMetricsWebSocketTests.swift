import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// `apitrace_websocket_events_total`: connection and close-code counters with labels a hostile file
/// cannot multiply, checked by Python (prometheus_client's parser, its own close-code classes).
@Suite("OpenMetrics export of WebSocket events")
struct OpenMetricsWebSocketTests {
    static let check = #"""
        import json, sys
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
        CLASSES = {1000: "normal", 1001: "going_away", 1002: "protocol_error", 1003: "unsupported_data", 1005: "no_status",
                   1006: "abnormal", 1007: "invalid_data", 1008: "policy", 1009: "message_too_big", 1010: "missing_extension",
                   1011: "server_error", 1012: "service_restart", 1013: "try_again_later", 1014: "bad_gateway", 1015: "tls_error"}
        def cls(code):
            if code is None: return "none"
            if code in CLASSES: return CLASSES[code]
            if 3000 <= code <= 3999: return "library"
            if 4000 <= code <= 4999: return "application"
            return "other"
        expected = {}
        for line in open(sys.argv[1], encoding="utf-8"):
            e = json.loads(line)
            if e.get("type") != "websocket": continue
            phase = e["phase"] if e["phase"] in ("open", "close", "reconnect", "fail") else "other"
            code_class = cls(e.get("code")) if phase in ("close", "fail") else ""
            abnormal = ("true" if e.get("code") not in (1000, 1001) else "false") if phase == "close" else ""
            key = (phase, code_class, abnormal)
            expected[key] = expected.get(key, 0) + 1
        got, routes, series = {}, set(), 0
        for family in text_string_to_metric_families(open(sys.argv[2], encoding="utf-8").read()):
            if family.name != "apitrace_websocket_events": continue
            for s in family.samples:
                key = (s.labels["phase"], s.labels["close_code_class"], s.labels["abnormal"])
                got[key] = got.get(key, 0) + s.value
                routes.add(s.labels["url_template"])
                series += 1
        missing = {str(k): (v, got.get(k)) for k, v in expected.items() if got.get(k) != v}
        print(json.dumps({"mismatches": missing, "extra": [str(k) for k in got if k not in expected],
                          "routes": len(routes), "series": series, "total": sum(got.values()),
                          "phases": sorted({k[0] for k in got}), "classes": sorted({k[1] for k in got})}))
        """#

    /// Writes `count` websocket lines (routes `/live/<i % routes>`, hostile phases and codes) as a
    /// plain copy and a trace file; returns the exporter's text over the file, read as the collector does.
    static func export(count: Int, routes: Int, in dir: TemporaryDirectory) throws -> (text: String, plain: String) {
        var lines: [String] = []
        for i in 0..<count {
            let phase = ["open", "close", "close", "close", "reconnect", "fail", "phase-\(i)"][i % 7]
            let code = i % 11 == 0 ? "" : #","code":\#([1000, 1001, 1006, 1011, 1008, 4001, 3002, (i * 7919) % 65_536][i % 8])"#
            lines.append(#"{"type":"websocket","ts":"2026-11-25T14:10:00.000Z","phase":"\#(phase)","route":"/live/\#(i % routes)"\#(code),"reason":"r\#(i)"}"#)
        }
        let body = lines.joined(separator: "\n") + "\n"
        let plain = dir.file("events-\(routes).jsonl"), file = dir.file("20261125T140000Z-evil\(routes)-0001.jsonl.gz")
        try Data(body.utf8).write(to: URL(fileURLWithPath: plain))
        let header = #"{"type":"header","format":"apitrace","version":1,"producer":"evil","started":"2026-11-25T14:00:00.000Z"}"#
        try writeGzip(header + "\n" + body, to: file)
        // The collector's path: the file read once through the reading layer, tallied, added.
        var exporter = OpenMetricsExporter()
        exporter.add(OpenMetricsExporter.tally(file: file).tally)
        // The event path counts the same.
        var events = OpenMetricsExporter()
        _ = TraceFileReader(path: file).forEachEvent { events.add($0) }
        if routes < 100 { #expect(events.text() == exporter.text()) }
        return (exporter.text(), plain)
    }

    func python(_ text: String, _ plain: String, in dir: TemporaryDirectory) throws -> [String: Any] {
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.file("metrics.txt")))
        let out = try run("/usr/bin/env", ["python3", "-c", Self.check, plain, dir.file("metrics.txt")])
        try #require(out.status == 0, "\(String(decoding: out.stderr, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: out.stdout) as? [String: Any])
    }

    @Test("counts by phase, close-code class and abnormal match Python's count of the lines", .requires(.prometheusClient))
    func counts() throws {
        let dir = TemporaryDirectory()
        let (text, plain) = try Self.export(count: 5000, routes: 40, in: dir)
        let result = try python(text, plain, in: dir)
        #expect((result["mismatches"] as? [String: Any])?.isEmpty == true, "\(result)")
        #expect((result["extra"] as? [Any])?.isEmpty == true, "\(result)")
        #expect(!text.contains("phase-"), "a phase from the file became a label")
    }

    @Test("20,000 distinct routes, hostile phases and codes: bounded labels, no event lost", .requires(.prometheusClient))
    func bounds() throws {
        let dir = TemporaryDirectory()
        let (text, plain) = try Self.export(count: 20_000, routes: 20_000, in: dir)
        let result = try python(text, plain, in: dir)
        #expect(result["total"] as? Double == 20_000)
        #expect((result["routes"] as? Int ?? .max) <= OpenMetricsExporter.maximumSeries)
        #expect((result["series"] as? Int ?? .max) <= OpenMetricsExporter.maximumSeries)
        let phases = Set(result["phases"] as? [String] ?? [])
        let classes = Set(result["classes"] as? [String] ?? [])
        #expect(phases.isSubset(of: ["open", "close", "reconnect", "fail", "other", "(other)"]), "\(phases)")
        #expect(classes.count <= 21, "\(classes)")
    }
}
