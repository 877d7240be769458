import APITraceTestSupport
import Foundation
import Testing

/// On-call scenarios replayed minute by minute, as cron runs `apitrace alert` (through the
/// binary's `--backtest`, which evaluates every minute with the incident tracker), with the
/// minimal rules file from the docs and six hours of history at 20 requests/s before each
/// incident. Each asserts the number of pages and the trigger and resolve times against the
/// targets on-call teams hold us to.
@Suite("alert scenarios at 20 requests/s", .serialized)
struct AlertScenarioTests {
    static let t0 = 1_795_327_200_000 as Int64  // 2026-11-22T06:00:00Z
    static let incident = t0 + 6 * 3_600_000   // every incident starts after six hours of history
    static let end = incident + 2 * 3_600_000

    struct Outcome { var pages: [Int64] = []; var resolves: [Int64] = [] }

    /// Writes the traffic (20 requests/s unless `rate` says otherwise) and replays `rules` minute by minute.
    static func replay(rules: String, rate: @escaping @Sendable (Int64) -> Double = { _ in 20 }, request: @escaping @Sendable (Int64, Int) -> String) async throws -> Outcome {
        let dir = TemporaryDirectory()
        try await offPool { try write(dir, rate: rate, request: request) }
        return try await replay(dir, rules: rules)
    }

    static func write(_ dir: TemporaryDirectory, rate: (Int64) -> Double, request: (Int64, Int) -> String) throws {
        var text = [UInt8]()
        text.reserveCapacity(80_000_000)
        text += Array((#"{"type":"header","format":"apitrace","version":1,"producer":"scenario","started":"2026-11-22T06:00:00.000Z"}"# + "\n").utf8)
        var ms = Double(t0)
        var i = 0
        while ms < Double(end) {
            let t = Int64(ms)
            text += Array(#"{"type":"request","ts":""#.utf8)
            appendTimestamp(t, to: &text)
            text += Array(#"","method":"GET","route":"/apps","\#(request(t, i))}"#.utf8)
            text.append(0x0A)
            ms += 1000 / rate(t)
            i += 1
        }
        try Data(text).write(to: URL(fileURLWithPath: dir.path + "/20261122T060000Z-scenario-0001.jsonl"))
    }

    static func replay(_ dir: TemporaryDirectory, rules: String) async throws -> Outcome {
        try rules.write(toFile: dir.path + "/rules.yaml", atomically: true, encoding: .utf8)
        let out = try await runOffPool(try builtProduct("apitrace").path, [
            "alert", dir.path, "--rules", dir.path + "/rules.yaml", "--backtest",
            "--since", iso(incident - 30 * 60_000), "--until", iso(end - 60_000), "--step", "1m",
        ])
        let stdout = String(decoding: out.stdout, as: UTF8.self)
        #expect(out.status == 0, "\(String(decoding: out.stderr, as: UTF8.self))")
        var outcome = Outcome()
        for line in stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let at = parse(String(parts[0])) else { continue }
            if parts[1] == "PAGE" { outcome.pages.append(at) }
            if parts[1] == "RESOLVE" { outcome.resolves.append(at) }
        }
        return outcome
    }

    static let errors = "rules:\n  - name: api\n    slo: 0.99\n    notify: [oncall]\nnotifiers:\n  oncall: {type: webhook, url: \"http://127.0.0.1:9/x\"}\n"
    static let latency = "rules:\n  - name: api-latency\n    latency_ms: 2000\n    slo: 0.95\n    notify: [oncall]\nnotifiers:\n  oncall: {type: webhook, url: \"http://127.0.0.1:9/x\"}\n"

    static func iso(_ ms: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    /// `2026-11-22THH:MM:SS.mmmZ` for an instant on the scenarios' day, without a formatter per line.
    static func appendTimestamp(_ ms: Int64, to out: inout [UInt8]) {
        let ofDay = ms - (t0 - 6 * 3_600_000)
        let fields = [(ofDay / 3_600_000, 2), ((ofDay / 60_000) % 60, 2), ((ofDay / 1000) % 60, 2), (ofDay % 1000, 3)]
        out += Array("2026-11-22T".utf8)
        for (index, (value, width)) in fields.enumerated() {
            var digits = [UInt8](repeating: 48, count: width)
            var v = value
            for k in stride(from: width - 1, through: 0, by: -1) { digits[k] = UInt8(48 + v % 10); v /= 10 }
            out += digits
            out.append(index < 2 ? UInt8(ascii: ":") : index == 2 ? UInt8(ascii: ".") : UInt8(ascii: "Z"))
        }
    }

    static func parse(_ text: String) -> Int64? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: text).map { Int64($0.timeIntervalSince1970 * 1000) }
    }

    static let ok = #"status":200,"duration_ms":40"#
    static func minutes(_ ms: Int64) -> Double { Double(ms) / 60_000 }

    func expectOneIncident(_ o: Outcome, start: Int64, lastBad: Int64, _ name: String) {
        // The scenario table of the closing note: minutes from the start to the page, from the last failure to the resolve.
        print("scenario \(name): pages \(o.pages.count), paged at +\(o.pages.first.map { Self.minutes($0 - start) } ?? -1) min, resolved +\(o.resolves.first.map { Self.minutes($0 - lastBad) } ?? -1) min after the last failure")
        #expect(o.pages.count == 1, "\(name): pages at \(o.pages.map(Self.iso))")
        #expect(o.resolves.count == 1, "\(name): resolves at \(o.resolves.map(Self.iso))")
        if let page = o.pages.first {
            #expect(page >= start && page - start <= 5 * 60_000, "\(name): paged \(Self.minutes(page - start)) min after the start")
        }
        if let resolve = o.resolves.first {
            #expect(resolve > lastBad && resolve - lastBad <= 15 * 60_000, "\(name): resolved \(Self.minutes(resolve - lastBad)) min after the last failure")
        }
    }

    @Test("a 10-minute 40% 5xx spike pages within 5 minutes and resolves within 15 of its end")
    func spike() async throws {
        let stop = Self.incident + 10 * 60_000
        let o = try await Self.replay(rules: Self.errors) { t, i in
            t >= Self.incident && t < stop && i % 5 < 2 ? #"status":503,"duration_ms":40"# : Self.ok
        }
        expectOneIncident(o, start: Self.incident, lastBad: stop, "spike")
    }

    @Test("a 15-minute burst of 30% timeouts pages within 5 minutes and resolves within 15 of its end")
    func timeouts() async throws {
        let stop = Self.incident + 15 * 60_000
        let o = try await Self.replay(rules: Self.errors) { t, i in
            t >= Self.incident && t < stop && i % 10 < 3 ? #"error":"URLError.timedOut","duration_ms":30000"# : Self.ok
        }
        expectOneIncident(o, start: Self.incident, lastBad: stop, "timeouts")
    }

    @Test("an hour of 25% errors flapping every 5 minutes is one incident")
    func flap() async throws {
        let stop = Self.incident + 60 * 60_000
        let o = try await Self.replay(rules: Self.errors) { t, i in
            let on = t >= Self.incident && t < stop && ((t - Self.incident) / 300_000) % 2 == 0
            return on && i % 4 == 0 ? #"status":500,"duration_ms":40"# : Self.ok
        }
        expectOneIncident(o, start: Self.incident, lastBad: stop - 5 * 60_000, "flap")
    }

    @Test("half the requests slower than latency_ms for 15 minutes pages within 5 and resolves within 15")
    func latencyBurst() async throws {
        let stop = Self.incident + 15 * 60_000
        let o = try await Self.replay(rules: Self.latency) { t, i in
            t >= Self.incident && t < stop && i % 2 == 0 ? #"status":200,"duration_ms":\#(4000 + (i % 5000))"# : Self.ok
        }
        expectOneIncident(o, start: Self.incident, lastBad: stop, "latency")
    }

    @Test("no page: steady cancellations, an offline burst, steady 3% and 2% errors, a night-time blip")
    func quiet() async throws {
        let offline = try await Self.replay(rules: Self.errors) { t, i in
            if i % 10 == 0 { return #"error":"URLError.cancelled","duration_ms":40"# }
            if t >= Self.incident, t < Self.incident + 20 * 60_000, i % 10 < 4 { return #"error":"URLError.notConnectedToInternet","duration_ms":2"# }
            return Self.ok
        }
        #expect(offline.pages.isEmpty, "cancel/offline paged at \(offline.pages.map(Self.iso))")
        for percent in [3, 2] {
            let steady = try await Self.replay(rules: Self.errors) { _, i in i % 100 < percent ? #"status":502,"duration_ms":40"# : Self.ok }
            #expect(steady.pages.isEmpty, "steady \(percent)% paged at \(steady.pages.map(Self.iso))")
        }
        // Night: one request every 20 s; three of four fail around the incident instant.
        let night = try await Self.replay(rules: Self.errors, rate: { _ in 0.05 }) { t, i in
            t >= Self.incident && t < Self.incident + 80_000 && i % 4 != 0 ? #"status":500,"duration_ms":40"# : Self.ok
        }
        #expect(night.pages.isEmpty, "night blip paged at \(night.pages.map(Self.iso))")
    }
}
