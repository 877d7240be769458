import APITraceTestSupport
import Foundation
import Testing

/// One filter grammar for every command's `--route`, `--session` and `--host` and for alert rule
/// scopes (`TextPattern`): `*` matches any run of characters, anywhere and more than once; without
/// one the value must match exactly. The same patterns go through `cat`, `export` (prometheus and
/// har), `report`, `alert` and `rules --format prometheus`, by the real CLI, and each selects what
/// a regular expression made here from the pattern selects.
@Suite("one filter grammar across cat, export, report and alert")
struct FilterGrammarTests {
    struct Request { var route: String; var host: String; var session: String }

    static let routes = ["/apps/{id}/reviews", "/apps/{id}", "/news/{id}/reviews", "/news"]
    static let hosts = ["api.example.com", "cdn.example.com", "api.example.org"]
    static let sessions = ["s-alpha-1", "s-alpha-2", "s-beta-1", "S*literal"]

    /// Route, host, session patterns (nil: no condition).
    static let cases: [(route: String?, host: String?, session: String?)] = [
        ("*/reviews", nil, nil),
        ("/apps/*", "*.example.com", nil),
        (nil, "api.*", "s-alpha-*"),
        ("/apps/{id}", "api.example.com", "s-beta-1"),
        ("*{id}*", "*example*", "*-1"),
        ("/news", "cdn.example.com", "S*"),
    ]

    /// Every request of the folder: each combination, a different number of times.
    static var requests: [Request] {
        var out: [Request] = []
        for (r, route) in routes.enumerated() {
            for (h, host) in hosts.enumerated() {
                for (s, session) in sessions.enumerated() {
                    out += Array(repeating: Request(route: route, host: host, session: session), count: 1 + (r + 2 * h + 3 * s) % 5)
                }
            }
        }
        return out
    }

    /// The pattern as an anchored regular expression, made here independently of `TextPattern`.
    static func matches(_ pattern: String?, _ value: String) -> Bool {
        guard let pattern else { return true }
        let regex = "^" + pattern.components(separatedBy: "*").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*") + "$"
        return value.range(of: regex, options: .regularExpression) != nil
    }

    static func expected(route: String?, host: String?, session: String?) -> Int {
        requests.filter { matches(route, $0.route) && matches(host, $0.host) && matches(session, $0.session) }.count
    }

    static func writeFolder(_ dir: String) throws {
        var lines = [#"{"type":"header","format":"apitrace","version":1,"producer":"grammar","started":"2026-11-22T09:00:00.000Z"}"#]
        for (i, r) in requests.enumerated() {
            let ts = String(format: "2026-11-22T09:%02d:%02d.%03dZ", (i / 60) % 10, i % 60, i % 1000)
            lines.append(#"{"type":"request","ts":"\#(ts)","session":"\#(r.session)","method":"GET","route":"\#(r.route)","host":"\#(r.host)","status":503,"duration_ms":7}"#)
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/20261122T090000Z-grammar-0001.jsonl"))
    }

    /// `--route P --host H --session S` for the options a command has.
    static func options(route: String?, host: String?, session: String?) -> [String] {
        [("--route", route), ("--host", host), ("--session", session)].flatMap { name, value in value.map { [name, $0] } ?? [] }
    }

    @Test("the same patterns select the same requests in every command", .timeLimit(.minutes(8)))
    func samePatternsEverywhere() async throws {
        let dir = TemporaryDirectory()
        try Self.writeFolder(dir.path)
        let apitrace = try builtProduct("apitrace").path
        for c in Self.cases {
            let label = "route \(c.route ?? "-") host \(c.host ?? "-") session \(c.session ?? "-")"

            // cat: all three.
            let cat = try await runOffPool(apitrace, ["cat", "--no-headers", "--type", "request"] + Self.options(route: c.route, host: c.host, session: c.session) + [dir.path])
            let catLines = String(decoding: cat.stdout, as: UTF8.self).split(separator: "\n").count
            #expect(catLines == Self.expected(route: c.route, host: c.host, session: c.session), "cat \(label)")

            // report: --route and --host.
            let reportOut = try await runOffPool(apitrace, ["report", "--format", "json"] + Self.options(route: c.route, host: c.host, session: nil) + [dir.path])
            let report = try JSONSerialization.jsonObject(with: reportOut.stdout) as! [String: Any]
            #expect((report["totals"] as! [String: Any])["requests"] as? Int == Self.expected(route: c.route, host: c.host, session: nil), "report \(label)")

            // export: all three, as OpenMetrics counters and as HAR entries.
            let want = Self.expected(route: c.route, host: c.host, session: c.session)
            let prom = String(decoding: try await runOffPool(apitrace, ["export", "--format", "prometheus"] + Self.options(route: c.route, host: c.host, session: c.session) + [dir.path]).stdout, as: UTF8.self)
            let counted = prom.split(separator: "\n").filter { $0.hasPrefix("apitrace_http_client_requests_total{") }.map { Double($0.split(separator: " ").last!)! }.reduce(0, +)
            #expect(Int(counted) == want, "export prometheus \(label)")
            let harOut = try await runOffPool(apitrace, ["export", "--format", "har"] + Self.options(route: c.route, host: c.host, session: c.session) + [dir.path])
            let har = try JSONSerialization.jsonObject(with: harOut.stdout) as! [String: Any]
            #expect(((har["log"] as! [String: Any])["entries"] as! [Any]).count == want, "export har \(label)")

            // alert: a rule scoped by route and host (every request fails, so it pages with its counts).
            let scope = [c.route.map { "route: \"\($0)\"" }, c.host.map { "host: \"\($0)\"" }].compactMap { $0 }
            let rules = """
                rules:
                  - name: scoped
                    scope: \(scope.isEmpty ? "all" : "{\(scope.joined(separator: ", "))}")
                    slo: 0.99
                    min_requests: 1
                    confidence: none
                    recent_window: 1d
                    burn_rate: [{long: 1d, short: 1d, factor: 0.000001}]
                    evidence_window: 1d
                    notify: [hook]
                notifiers:
                  hook: {type: webhook, url: "http://127.0.0.1:9/unused"}
                """
            try rules.write(toFile: dir.file("rules.yaml"), atomically: true, encoding: .utf8)
            let alert = try await runOffPool(apitrace, [
                "alert", dir.path, "--rules", dir.file("rules.yaml"), "--state", dir.file("state-\(UUID().uuidString).json"),
                "--dry-run", "--now", "2026-11-22T09:30:00Z",
            ])
            let alertText = String(decoding: alert.stdout, as: UTF8.self)
            let payloadLine = try #require(alertText.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("{") },
                                           "alert \(label) did not page: \(alertText) \(String(decoding: alert.stderr, as: UTF8.self))")
            let payload = try JSONSerialization.jsonObject(with: Data(payloadLine.utf8)) as! [String: Any]
            let routes = (payload["evidence"] as! [String: Any])["top_failing_routes"] as! [[String: Any]]
            #expect(routes.map { ($0["requests"] as! NSNumber).intValue }.reduce(0, +) == Self.expected(route: c.route, host: c.host, session: nil), "alert \(label)")
        }
    }

    @Test("rules --format prometheus matches a scope's * wherever it stands, in route and host alike")
    func prometheusScopes() async throws {
        let dir = TemporaryDirectory()
        try """
            rules:
              - name: reviews
                scope: {route: "*/reviews", host: "*.example.com"}
                slo: 0.99
              - name: exact
                scope: {route: "/apps/{id}", host: "api.example.com"}
                slo: 0.99
            """.write(toFile: dir.file("rules.yaml"), atomically: true, encoding: .utf8)
        let out = try await runOffPool(try builtProduct("apitrace").path, ["rules", "--format", "prometheus", "--rules", dir.file("rules.yaml")])
        let yaml = String(decoding: out.stdout, as: UTF8.self)
        #expect(yaml.contains(#"url_template=~".*/reviews""#), "\(yaml)")
        #expect(yaml.contains(#"server_address=~".*\\.example\\.com""#), "\(yaml)")
        #expect(yaml.contains(#"url_template="/apps/{id}""#) && yaml.contains(#"server_address="api.example.com""#), "\(yaml)")
    }

    @Test("every --route, --session and --host says the one grammar in its help", arguments: [("cat", 3), ("report", 2), ("export", 3)])
    func oneHelpText(command: String, options: Int) async throws {
        let help = try await runOffPool(try builtProduct("apitrace").path, [command, "--help"])
        // The help is wrapped to the terminal: compare with runs of white space made one space.
        let text = String(decoding: help.stdout + help.stderr, as: UTF8.self).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let sentence = "* matches any run of characters, anywhere and more than once (/apps/*, */reviews, *.example.com); without * the value must match exactly"
        #expect(text.components(separatedBy: sentence).count - 1 == options, "\(text)")
        #expect(!text.contains("trailing *"))
    }
}
