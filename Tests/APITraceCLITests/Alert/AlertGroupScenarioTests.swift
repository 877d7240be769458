import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

/// On-call scenarios for a rule with `group_by: [route]`, run as cron runs `apitrace alert`:
/// the real binary once a minute with `--now`, its state and count cache kept between runs, pages
/// to a real webhook receiver on 127.0.0.1. Traffic is 20 requests/s over ten routes of uneven
/// weight (30% down to 2%), written as 10-minute files the way a producer rotates them, with two
/// hours of history before each incident. Each scenario asserts the pages (count, group named,
/// trigger within 5 minutes, resolve within 15 after the errors stop) of the grouped rule and of
/// the same rule without `group_by` beside it, whose behaviour must not change.
@Suite("grouped alert scenarios, cron runs at 20 requests/s", .serialized)
struct AlertGroupScenarioTests {
    static let t0 = 1_795_341_600_000 as Int64       // 2026-11-22T10:00:00Z
    static let incident = t0 + 2 * 3_600_000        // 12:00
    static let end = incident + 60 * 60_000

    /// Route weights in percent (sum 100): the issue's `/newspapers/{id}/news` carries 2%.
    static let routes: [(String, Int)] = [
        ("/feed", 30), ("/profile", 20), ("/search", 15), ("/apps/{id}", 10), ("/login", 8), ("/settings", 6),
        ("/notifications", 5), ("/newspapers/{id}/news", 2), ("/avatar", 2), ("/terms", 2),
    ]
    /// The route of the i-th request: each route's share of every 100 requests, interleaved.
    static let routeTable: [String] = {
        var table: [String] = []
        for (route, weight) in routes { table += Array(repeating: route, count: weight) }
        // A fixed shuffle (multiplication by a unit mod 100) so one route's requests are spread over the 5 seconds.
        return (0..<100).map { table[($0 * 37) % 100] }
    }()

    static let ok = #""status":200,"duration_ms":40"#
    static let bad = #""status":503,"duration_ms":40"#

    static let rules = """
        rules:
          - name: api
            slo: 0.99
            notify: [hook]
          - name: api-routes
            slo: 0.99
            group_by: [route]
            notify: [hook]
        notifiers:
          hook: {type: webhook, webhook_url_env: HOOK_URL}
        """

    /// One page or resolve the receiver got.
    /// `@unchecked`: `evidence` is a parsed JSON object (value types only), handed from the receiver closure once.
    struct Page: @unchecked Sendable {
        var action: String
        var rule: String
        var group: String?
        var summary: String
        var at: Int64
        var evidence: [String: Any]
    }

    /// Writes the traffic as 10-minute files; `event(t, i, route)` gives the fields after the route
    /// (nil: the default success), `extra(t)` optional extra requests at instant t (a new endpoint).
    static func write(
        _ dir: TemporaryDirectory, rate: (Int64) -> Double = { _ in 20 },
        event: (Int64, Int, String) -> String?, extra: ((Int64, Int) -> (route: String, fields: String)?)? = nil
    ) throws {
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        var sequence = 0
        var fileStart = t0
        var ms = Double(t0)
        var i = 0
        while fileStart < end {
            sequence += 1
            let fileEnd = fileStart + 600_000
            var text = [UInt8]()
            let name = String(AlertScenarioTests.iso(fileStart).prefix(19)).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "") + "Z"
            text += Array((#"{"type":"header","format":"apitrace","version":1,"producer":"scenario","started":""# + AlertScenarioTests.iso(fileStart) + "\"}\n").utf8)
            while ms < Double(fileEnd) {
                let t = Int64(ms)
                let route = routeTable[i % 100]
                func line(_ route: String, _ fields: String) {
                    text += Array(#"{"type":"request","ts":""#.utf8)
                    AlertScenarioTests.appendTimestamp(t, to: &text)
                    text += Array(#"","method":"GET","route":""#.utf8) + Array(route.utf8) + Array("\",\(fields)}\n".utf8)
                }
                line(route, event(t, i, route) ?? ok)
                if let extra, let (route, fields) = extra(t, i) { line(route, fields) }
                ms += 1000 / rate(t)
                i += 1
            }
            try Data(text).write(to: URL(fileURLWithPath: dir.file("traces/\(name)-scenario-\(String(format: "%04d", sequence)).jsonl")))
            fileStart = fileEnd
        }
    }

    /// Runs `apitrace alert` once a minute from `from` to `to` (minutes after the incident's start)
    /// and returns what the receiver got.
    static func cron(_ dir: TemporaryDirectory, from: Int64 = -5, to: Int64) async throws -> [Page] {
        let rules = try TraceFixture.rules(Self.rules, in: dir)
        return try await Receiver.with { receiver in
            for minute in from...to {
                let now = incident + minute * 60_000
                let run = try await apitrace(
                    ["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"), "--now", AlertScenarioTests.iso(now)],
                    environment: ["HOOK_URL": receiver.url("/hook")])
                #expect(run.status == 0, "minute \(minute): \(run.stderr)")
            }
            return receiver.requests(to: "/hook").map { r in
                let json = r.json
                let group = (json["group"] as? [String: Any]).flatMap { ($0["values"] as? [String])?.joined(separator: " ") }
                return Page(
                    action: json["action"] as? String ?? "?", rule: json["rule"] as? String ?? "?", group: group,
                    summary: json["summary"] as? String ?? "", at: AlertScenarioTests.parse(json["timestamp"] as? String ?? "") ?? 0,
                    evidence: json["evidence"] as? [String: Any] ?? [:])
            }
        }
    }

    static func minutes(_ ms: Int64) -> Double { Double(ms) / 60_000 }

    /// Asserts one incident of `rule` (and `group`), paged within 5 minutes of `start` and resolved
    /// within 15 of `lastBad`; prints the row of the closing note's table.
    func expectOneIncident(_ pages: [Page], rule: String, group: String?, start: Int64, lastBad: Int64, _ name: String) {
        let mine = pages.filter { $0.rule == rule && $0.group == group }
        let triggers = mine.filter { $0.action == "trigger" }, resolves = mine.filter { $0.action == "resolve" }
        print("group scenario \(name): \(rule) \(group ?? "(whole rule)"): pages \(triggers.count), paged at +\(triggers.first.map { Self.minutes($0.at - start) } ?? -1) min, resolved +\(resolves.first.map { Self.minutes($0.at - lastBad) } ?? -1) min after the last failure")
        #expect(triggers.count == 1, "\(name): \(triggers.map(\.summary))")
        #expect(resolves.count == 1, "\(name): \(resolves.map(\.summary))")
        if let page = triggers.first {
            #expect(page.at >= start && page.at - start <= 5 * 60_000, "\(name): paged \(Self.minutes(page.at - start)) min after the start")
            if let group { #expect(page.summary.hasPrefix("\(group) (\(rule)): "), "\(name): \(page.summary)") }
        }
        if let resolve = resolves.first {
            #expect(resolve.at > lastBad && resolve.at - lastBad <= 15 * 60_000, "\(name): resolved \(Self.minutes(resolve.at - lastBad)) min after the last failure")
        }
    }

    /// The route's requests and failures in `[from, to)` counted by Python from the files: the
    /// independent check of a group's evidence.
    static func pythonCount(_ dir: TemporaryDirectory, route: String, from: Int64, to: Int64) throws -> (requests: Int, failures: Int) {
        let script = """
            import json, os, sys, datetime
            folder, route, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
            req = fail = 0
            for name in sorted(os.listdir(folder)):
                for line in open(os.path.join(folder, name)):
                    e = json.loads(line)
                    if e.get("type") != "request" or e.get("route") != route: continue
                    t = datetime.datetime.strptime(e["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
                    ms = int(t.timestamp() * 1000 + 0.5)
                    if lo <= ms < hi:
                        req += 1
                        fail += 1 if e.get("status", 0) >= 500 else 0
            print(req, fail)
            """
        let out = try runPython(script, [dir.file("traces"), route, String(from), String(to)])
        let parts = out.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return (parts[0], parts[1])
    }

    static func runPython(_ script: String, _ arguments: [String]) throws -> String {
        let result = try run("/usr/bin/env", ["python3", "-c", script] + arguments)
        return String(decoding: result.stdout, as: UTF8.self)
    }

    @Test("a route with 2% of the traffic failing completely for 30 minutes pages once, naming the route; the ungrouped rule never does")
    func lowTrafficRouteFails() async throws {
        let dir = TemporaryDirectory()
        let route = "/newspapers/{id}/news", stop = Self.incident + 30 * 60_000
        try await offPool { try Self.write(dir) { t, _, r in r == route && t >= Self.incident && t < stop ? Self.bad : nil } }
        let pages = try await Self.cron(dir, to: 47)
        expectOneIncident(pages, rule: "api-routes", group: route, start: Self.incident, lastBad: stop, "2% route down 30m")
        #expect(pages.filter { $0.rule == "api" }.isEmpty, "the ungrouped rule paged: \(pages.filter { $0.rule == "api" }.map(\.summary))")
        #expect(pages.filter { $0.rule == "api-routes" && $0.group != route }.isEmpty)
        // The page's numbers are the group's own, as Python counts them from the files.
        let trigger = try #require(pages.first { $0.action == "trigger" && $0.group == route })
        let window = try #require(trigger.evidence["window"] as? String)
        let windowMs: Int64 = window == "1m" ? 60_000 : window == "5m" ? 300_000 : 3_600_000
        let expected = try Self.pythonCount(dir, route: route, from: trigger.at - windowMs, to: trigger.at)
        #expect(trigger.evidence["requests"] as? Double == Double(expected.requests), "\(trigger.evidence)")
        #expect(trigger.evidence["failures"] as? Double == Double(expected.failures))
        #expect(expected.requests >= 20 && expected.failures == expected.requests, "python: \(expected)")
        #expect(trigger.evidence["group"] as? String == "route=\(route)")
        let top = try #require((trigger.evidence["top_failing_routes"] as? [[String: Any]])?.first)
        #expect(top["route"] as? String == route && (trigger.evidence["top_failing_routes"] as? [Any])?.count == 1)
    }

    @Test("mute --group silences that group alone; a bad --group or a group of the wrong keys is refused")
    func muteOneGroup() async throws {
        let dir = TemporaryDirectory()
        let route = "/newspapers/{id}/news", stop = Self.incident + 30 * 60_000
        try await offPool {
            try Self.write(dir) { t, _, r in
                if r == route, t >= Self.incident, t < stop { return Self.bad }
                return r == "/search" && t >= Self.incident && t < Self.incident + 10 * 60_000 ? Self.bad : nil
            }
        }
        let rules = try TraceFixture.rules(Self.rules, in: dir)
        let state = dir.file("state.json"), at = AlertScenarioTests.iso(Self.incident - 60_000)
        let bad = try await apitrace(["mute", "--for", "2h", "--rule", "api-routes", "--group", "path=/x", "--state", state, "--now", at])
        #expect(bad.status != 0 && bad.stderr.contains("--group: expected key=value with key route, host or app_version"), "\(bad.stderr)")
        let wrongKeys = try await apitrace(["mute", "--for", "2h", "--rule", "api-routes", "--group", "host=a", "--rules", rules, "--state", state, "--now", at])
        #expect(wrongKeys.status != 0 && wrongKeys.stderr.contains("rule api-routes groups by route"), "\(wrongKeys.stderr)")
        let muted = try await apitrace(["mute", "--for", "2h", "--rule", "api-routes", "--group", "route=\(route)", "--rules", rules, "--state", state, "--now", at])
        #expect(muted.status == 0 && muted.stdout.contains("api-routes group route=\(route)"), "\(muted.stdout) \(muted.stderr)")
        let pages = try await Self.cron(dir, to: 27)
        // The muted route's incident is recorded, not paged; /search (15%) failing pages on its own.
        #expect(pages.filter { $0.group == route }.isEmpty, "\(pages.map(\.summary))")
        #expect(pages.filter { $0.group == "/search" && $0.action == "trigger" }.count == 1, "\(pages.map(\.summary))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])
        let incidents = try #require(json["incidents"] as? [String: Any])
        let mutedIncident = try #require(incidents["api-routes[route=\(route)]"] as? [String: Any])
        #expect((mutedIncident["mutedEvaluations"] as? Int ?? 0) > 0 && mutedIncident["lastTriggered"] == nil)
    }

    @Test("the busiest route at 20% errors for 10 minutes pages once, naming it")
    func busyRouteAtTwentyPercent() async throws {
        let dir = TemporaryDirectory()
        let stop = Self.incident + 10 * 60_000
        // /feed is 30% of the traffic: 6 requests/s; every fifth fails (the requests with i % 5 == 0
        // are 6 of /feed's 30 in every 100: exactly 20%, spread over the 5 seconds).
        try await offPool {
            try Self.write(dir) { t, i, r in r == "/feed" && t >= Self.incident && t < stop && i % 5 == 0 ? Self.bad : nil }
        }
        let share = Double((0..<100).filter { Self.routeTable[$0] == "/feed" && $0 % 5 == 0 }.count) / Double(Self.routeTable.filter { $0 == "/feed" }.count)
        #expect(share == 0.2)
        let pages = try await Self.cron(dir, to: 27)
        expectOneIncident(pages, rule: "api-routes", group: "/feed", start: Self.incident, lastBad: stop, "busiest route 20% for 10m")
        #expect(pages.filter { $0.rule == "api-routes" && $0.group != "/feed" }.isEmpty)
        // 6% of all requests: under the ungrouped rule's 14.4%.
        #expect(pages.filter { $0.rule == "api" }.isEmpty)
    }

    @Test("a failure spread evenly over every route sends one summary page for the grouped rule, not one per route")
    func evenlySpread() async throws {
        let dir = TemporaryDirectory()
        let stop = Self.incident + 10 * 60_000
        try await offPool { try Self.write(dir) { t, i, _ in t >= Self.incident && t < stop && (i / 100) % 5 < 2 ? Self.bad : nil } }
        let pages = try await Self.cron(dir, to: 27)
        let grouped = pages.filter { $0.rule == "api-routes" && $0.action == "trigger" }
        let summaries = grouped.filter { $0.group == nil }
        print("group scenario evenly spread: \(grouped.count) page(s) from api-routes (\(summaries.count) summary), \(pages.filter { $0.rule == "api" && $0.action == "trigger" }.count) from api; first: \(grouped.first?.summary.prefix(160) ?? "-")")
        #expect(summaries.count == 1)
        #expect(grouped.count <= 4, "\(grouped.map(\.summary))")
        if let summary = summaries.first {
            #expect(summary.summary.hasPrefix("api-routes: ") && summary.summary.contains("groups firing at once"), "\(summary.summary)")
        }
        expectOneIncident(pages, rule: "api-routes", group: nil, start: Self.incident, lastBad: stop, "evenly spread, summary")
        expectOneIncident(pages, rule: "api", group: nil, start: Self.incident, lastBad: stop, "evenly spread, ungrouped")
    }

    @Test("a new endpoint that only fails is a group like any other")
    func newEndpointOnlyFails() async throws {
        let dir = TemporaryDirectory()
        let stop = Self.incident + 20 * 60_000
        try await offPool {
            try Self.write(dir, event: { _, _, _ in nil }, extra: { t, i in
                // One request a second to /v2/checkout from the incident on, every one failing.
                t >= Self.incident && t < stop && i % 20 == 0 ? ("/v2/checkout", Self.bad) : nil
            })
        }
        let pages = try await Self.cron(dir, to: 37)
        expectOneIncident(pages, rule: "api-routes", group: "/v2/checkout", start: Self.incident, lastBad: stop, "new endpoint failing")
        #expect(pages.filter { $0.rule == "api-routes" && $0.group != "/v2/checkout" }.isEmpty)
    }

    @Test("night-time: a handful of failures on a tiny route never pages")
    func nightTimeTinyRoute() async throws {
        let dir = TemporaryDirectory()
        // One request every 5 s (0.2/s); /terms (2%) gets one every ~4 minutes: three of four fail.
        try await offPool {
            try Self.write(dir, rate: { _ in 0.2 }) { t, _, r in r == "/terms" && t >= Self.incident - 10 * 60_000 && t < Self.incident + 10 * 60_000 ? Self.bad : nil }
        }
        let pages = try await Self.cron(dir, from: -10, to: 20)
        print("group scenario night-time tiny route: \(pages.count) pages")
        #expect(pages.isEmpty, "\(pages.map(\.summary))")
    }
}
