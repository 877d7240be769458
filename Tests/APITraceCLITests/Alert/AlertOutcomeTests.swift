import APITraceTestSupport
import Foundation
import Testing

/// `apitrace alert` over traffic shaped like a real client's, with the minimal rules file from the
/// docs: what the reading layer decides (weights, client-side outcomes) decides whether it pages.
@Suite("alert reads outcomes and weights as every command does")
struct AlertOutcomeTests {
    static let start = 1_795_327_200_000 as Int64  // 2026-11-22T06:00:00Z

    /// Six hours at 2 requests/s; `outcome(ms)` gives each request's extra JSON fields.
    static func writeTraffic(_ dir: String, hours: Int = 6, extra: [String] = [], outcome: @escaping @Sendable (Int64, Int) -> String) async throws {
        try await offPool { try writeTrafficNow(dir, hours: hours, extra: extra, outcome: outcome) }
    }

    static func writeTrafficNow(_ dir: String, hours: Int, extra: [String], outcome: (Int64, Int) -> String) throws {
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"alerttest","started":"2026-11-22T06:00:00.000Z"}"#]
        for i in 0..<(hours * 3600 * 2) {
            let ms = start + Int64(i) * 500
            lines.append(#"{"type":"request","ts":"\#(iso(ms))","method":"GET","route":"/apps","duration_ms":40,\#(outcome(ms, i))}"#)
        }
        lines += extra
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/20261122T060000Z-alerttest-0001.jsonl"))
    }

    static func iso(_ ms: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }

    static func alert(_ dir: String, at ms: Int64) async throws -> String {
        let rules = dir + "/rules.yaml"
        try "rules:\n  - name: api\n    slo: 0.99\n    notify: [hook]\nnotifiers:\n  hook: {type: webhook, url: \"http://127.0.0.1:9/unused\"}\n"
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let out = try await runOffPool(try builtProduct("apitrace").path, ["alert", dir, "--rules", rules, "--state", dir + "/state.json", "--dry-run", "--now", iso(ms)])
        #expect(out.status < 128)
        return String(decoding: out.stdout, as: UTF8.self) + String(decoding: out.stderr, as: UTF8.self)
    }

    @Test("one success line claiming sample_rate 1e-300 inside a real spike cannot silence the page")
    func poisonedSampleRate() async throws {
        let dir = TemporaryDirectory()
        let spikeStart = Self.start + 5 * 3_600_000
        // 1% errors for five hours, then 40% 5xx; the poisoned line lands just before the spike.
        let poisoned = #"{"type":"request","ts":"\#(Self.iso(spikeStart - 1000))","method":"GET","route":"/apps","status":200,"duration_ms":3,"sample_rate":1e-300}"#
        try await Self.writeTraffic(dir.path, extra: [poisoned]) { ms, i in
            let failing = ms >= spikeStart ? i % 5 < 2 : i % 100 == 0
            return failing ? #""status":503"# : #""status":200"#
        }
        let output = try await Self.alert(dir.path, at: spikeStart + 40 * 60_000)
        #expect(output.contains("TRIGGERED"), "\(output)")
        #expect(output.contains("sample_rate ignored on 1 line"), "\(output)")
    }

    @Test("10% cancelled and a 20-minute offline burst on 30% of requests never page; timeouts do")
    func clientSideOutcomes() async throws {
        let quiet = TemporaryDirectory()
        let offlineStart = Self.start + 4 * 3_600_000
        try await Self.writeTraffic(quiet.path) { ms, i in
            if i % 10 == 0 { return #""error":"URLError.cancelled""# }
            if ms >= offlineStart, ms < offlineStart + 20 * 60_000, i % 10 < 4, i % 10 > 0 { return #""error":"URLError.notConnectedToInternet""# }
            return #""status":200"#
        }
        for minutes in [10, 20, 30, 60] {
            let output = try await Self.alert(quiet.path, at: offlineStart + Int64(minutes) * 60_000)
            #expect(!output.contains("TRIGGERED"), "minute \(minutes): \(output)")
        }

        let loud = TemporaryDirectory()
        try await Self.writeTraffic(loud.path) { ms, i in
            ms >= offlineStart && ms < offlineStart + 40 * 60_000 && i % 10 < 4 ? #""error":"URLError.timedOut""# : #""status":200"#
        }
        let output = try await Self.alert(loud.path, at: offlineStart + 35 * 60_000)
        #expect(output.contains("TRIGGERED"), "\(output)")
    }
}
