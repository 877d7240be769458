@testable import APITraceAlerting
import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

/// `group_by`: the rules file, counting per group (with the count cache and under `max_groups`),
/// per-group incidents, dedup keys and mutes, and the summary page of many groups.
@Suite struct AlertGroupTests {
    let now = TraceFixture.now.millisecondsSince1970
    let minute = TraceFixture.minute

    static func rules(_ rule: String) -> String {
        "rules:\n  - name: api-errors\n    slo: 0.99\n" + rule + "\n    notify: [hook]\nnotifiers:\n  hook: {type: webhook, url: \"http://127.0.0.1:9/x\"}\n"
    }

    // MARK: - The rules file

    @Test func groupByParsesInOneOrderAndItsLimitsAreChecked() throws {
        let rule = try #require(AlertRules.parse(Self.rules("    group_by: [app_version, route]\n    max_groups: 50\n    max_group_pages: 2")).rules.first)
        #expect(rule.groupBy == [.route, .appVersion])
        #expect(rule.maxGroups == 50 && rule.maxGroupPages == 2)
        let scalar = try #require(AlertRules.parse(Self.rules("    group_by: host")).rules.first)
        #expect(scalar.groupBy == [.host] && scalar.maxGroups == 100 && scalar.maxGroupPages == 3)
    }

    @Test(arguments: [
        ("    group_by: [route, path]", "rules[0].group_by[1]: rule api-errors cannot group by path; group keys are route, host and app_version"),
        ("    group_by: [route, route]", "rule api-errors groups by route twice"),
        ("    group_by: []", "give at least one group key"),
        ("    max_groups: 10", "max_groups needs `group_by` on the rule"),
        ("    group_by: [route]\n    max_groups: 0", "must be between 1 and 1000"),
        ("    group_by: [route]\n    max_group_pages: 100000", "must be between 1 and 1000"),
        ("    group_by: [route]\n    new_failures: true", "group_by does not combine with new_failures"),
    ])
    func badGroupsAreClearErrors(rule: String, message: String) throws {
        #expect {
            try AlertRules.parse(Self.rules(rule), file: "r.yaml")
        } throws: { error in
            "\(error)".hasPrefix("r.yaml:") && "\(error)".contains(message)
        }
    }

    // MARK: - Counting

    /// Six hours at 60 requests a minute over three routes; /news fails completely for the last 10 minutes.
    func writeTraffic(_ dir: TemporaryDirectory) throws -> [TraceEvent] {
        let events = TraceFixture.events([
            .init(from: -360, to: 0, perMinute: 40, failureRatio: 0.01, route: "/feed"),
            .init(from: -360, to: 0, perMinute: 15, failureRatio: 0.0, route: "/profile"),
            .init(from: -360, to: -10, perMinute: 5, failureRatio: 0.0, route: "/news"),
            .init(from: -10, to: 0, perMinute: 5, failureRatio: 1.0, route: "/news"),
        ]).sorted { $0.timestamp.millisecondsSince1970 < $1.timestamp.millisecondsSince1970 }
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        _ = try TraceFixture.write(events, to: dir.file("traces"))
        return events
    }

    @Test func eachGroupIsCountedOnItsOwnWithAndWithoutTheCountCache() throws {
        let dir = TemporaryDirectory()
        let events = try writeTraffic(dir)
        var rule = AlertRule(name: "routes", slo: 0.99)
        rule.groupBy = [.route]
        let ranges = rule.countedRanges(from: now, to: now)
        let plain = WindowedFailureCounter(rules: [rule], ranges: ranges).count(paths: [dir.file("traces")])
        _ = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [dir.file("traces")])
        let cached = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [dir.file("traces")])
        #expect(cached.filesFromCache == 5)
        for route in ["/feed", "/profile", "/news"] {
            let group = AlertGroup(keys: [.route], values: [route])
            for window in [5, 60, 360] as [Int64] {
                let range = (now - window * minute)..<now
                var requests = 0.0, failures = 0.0
                for e in events {
                    guard case .request(let r) = e.payload, r.route == route, range.contains(e.timestamp.millisecondsSince1970) else { continue }
                    requests += 1
                    if (r.status ?? 500) >= 500 { failures += 1 }
                }
                #expect(plain.groups[0][group]?.totals(in: range) == WindowTotals(requests: requests, failures: failures), "\(route) \(window)m")
                #expect(cached.groups[0][group]?.totals(in: range) == plain.groups[0][group]?.totals(in: range))
            }
        }
        #expect(plain.groups[0].count == 3 && !plain.groupsOverflowed[0])
        // The whole rule's counts are those of an ungrouped rule.
        let ungrouped = WindowedFailureCounter(rules: [AlertRule(name: "all", slo: 0.99)], ranges: ranges).count(paths: [dir.file("traces")])
        #expect(plain.counts[0].totals(in: (now - 3_600_000)..<now) == ungrouped.counts[0].totals(in: (now - 3_600_000)..<now))
    }

    @Test func groupsBeyondTheCapAreCountedAsOtherAndReported() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        // 500 distinct routes (a path with an id that was not templated), one request each minute.
        var traffic: [TraceFixture.Traffic] = []
        for i in 0..<500 { traffic.append(.init(from: -30, to: 0, perMinute: 1, failureRatio: 0, route: "/items/\(i)")) }
        traffic.append(.init(from: -30, to: 0, perMinute: 30, failureRatio: 0.5, route: "/feed"))
        let events = TraceFixture.events(traffic).sorted { $0.timestamp.millisecondsSince1970 < $1.timestamp.millisecondsSince1970 }
        _ = try TraceFixture.write(events, to: dir.file("traces"))
        var rule = AlertRule(name: "routes", slo: 0.99)
        rule.groupBy = [.route]
        rule.maxGroups = 20
        let counted = WindowedFailureCounter(rules: [rule], ranges: rule.countedRanges(from: now, to: now)).count(paths: [dir.file("traces")])
        #expect(counted.groupsOverflowed[0])
        #expect(counted.groups[0].count == 21)  // 20 groups and (other)
        let other = try #require(counted.groups[0][AlertGroup.other(keys: [.route])])
        let range = (now - 30 * minute)..<now
        let sum = counted.groups[0].values.reduce(0.0) { $0 + $1.totals(in: range).requests }
        // Nothing is lost: the groups and (other) add up to the whole rule.
        #expect(sum == counted.counts[0].totals(in: range).requests && sum == Double(events.count))
        #expect(other.totals(in: range).requests > 0)
        // The busiest route took a place of its own.
        #expect(counted.groups[0][AlertGroup(keys: [.route], values: ["/feed"])]?.totals(in: range).failures == 450)
    }

    // MARK: - Incidents

    @Test func eachGroupIsItsOwnIncidentWithItsOwnKeyAndMute() throws {
        var rule = AlertRule(name: "api-errors", slo: 0.99)
        rule.groupBy = [.route]
        var state = AlertState()
        let news = AlertGroup(keys: [.route], values: ["/news"]), feed = AlertGroup(keys: [.route], values: ["/feed"])
        func counts(_ failing: [String: Double]) -> [AlertGroup: FailureCounts] {
            var out: [AlertGroup: FailureCounts] = [:]
            for (route, ratio) in failing {
                let buckets = 360 * 6
                out[AlertGroup(keys: [.route], values: [route])] = FailureCounts(
                    bucketMilliseconds: 10_000, firstBucket: now / 10_000 - Int64(buckets),
                    requests: Array(repeating: 10, count: buckets), failures: (0..<buckets).map { $0 >= buckets - 60 ? 10 * ratio : 0 })
            }
            return out
        }
        let total = FailureCounts.empty(bucketMilliseconds: 10_000)
        state.mutes.append(Mute(id: "m1", rule: "api-errors", created: 0, until: now + 3_600_000, createdBy: nil, comment: nil))
        state.mutes[0].group = feed.label
        var transitions: [String: IncidentTracker.Transition] = [:]
        for e in GroupedDetection.evaluate(rule, total: total, groups: counts(["/news": 1, "/feed": 0.5, "/profile": 0]), state: state, at: now) {
            let (t, n) = IncidentTracker.advance(&state, rule: rule, detection: e.detection, subject: e.subject, evidence: {
                AlertEvidence(rule: rule, detection: e.detection, tally: EvidenceTally(), traceDirectory: "t", subject: e.subject)
            }, at: now)
            transitions[e.subject.group?.label ?? "summary"] = t
            if t == .triggered {
                #expect(n?.summary.hasPrefix("/news (api-errors): 100% of requests failing over") == true, "\(n?.summary ?? "")")
                #expect(n?.group == news)
                #expect(n?.incidentID.hasPrefix("apitrace/api-errors/route=/news#") == true, "\(n?.incidentID ?? "")")
            }
        }
        #expect(transitions == ["summary": .quiet, "route=/news": .triggered, "route=/feed": .muted, "route=/profile": .quiet])
        #expect(state.incidents["api-errors[route=/news]"]?.group == news)
        #expect(state.incidents["api-errors[route=/feed]"]?.mutedEvaluations == 1)
        #expect(state.incidents["api-errors[route=/news]"]?.id != state.incidents["api-errors[route=/feed]"]?.id)
        // Without traffic the open group recovers, then resolves after resolve_after.
        var later = now
        var resolved: AlertNotification?
        for _ in 0...10 {
            later += 60_000
            for e in GroupedDetection.evaluate(rule, total: total, groups: [:], state: state, at: later) where e.subject.group == news {
                let (t, n) = IncidentTracker.advance(&state, rule: rule, detection: e.detection, subject: e.subject, evidence: {
                    AlertEvidence(rule: rule, detection: e.detection, tally: EvidenceTally(), traceDirectory: "t", subject: e.subject)
                }, at: later)
                if t == .resolved { resolved = n }
            }
        }
        #expect(resolved?.summary.hasPrefix("/news (api-errors) resolved") == true)
        #expect(resolved?.group == news)
    }

    @Test func manyGroupsFiringTogetherSendOneSummaryPage() throws {
        var rule = AlertRule(name: "api-errors", slo: 0.99)
        rule.groupBy = [.route]
        var groups: [AlertGroup: FailureCounts] = [:]
        let buckets = 360 * 6
        for i in 0..<8 {
            groups[AlertGroup(keys: [.route], values: ["/r\(i)"])] = FailureCounts(
                bucketMilliseconds: 10_000, firstBucket: now / 10_000 - Int64(buckets),
                requests: Array(repeating: 10, count: buckets), failures: (0..<buckets).map { $0 >= buckets - 60 ? 5 : 0 })
        }
        var state = AlertState()
        var pages: [AlertNotification] = []
        var folded = 0
        for e in GroupedDetection.evaluate(rule, total: .empty(bucketMilliseconds: 10_000), groups: groups, state: state, at: now) {
            let (t, n) = IncidentTracker.advance(&state, rule: rule, detection: e.detection, subject: e.subject, evidence: {
                AlertEvidence(rule: rule, detection: e.detection, tally: EvidenceTally(), traceDirectory: "t", subject: e.subject)
            }, at: now)
            if let n, t == .triggered { pages.append(n) }
            if t == .folded { folded += 1 }
        }
        #expect(pages.count == 1 && folded == 8)
        #expect(pages.first?.summary.hasPrefix("api-errors: 8 groups firing at once (/r0, /r1, /r2 and 5 more)") == true, "\(pages.first?.summary ?? "")")
        #expect(pages.first?.group == nil)
    }

    @Test func aMuteOfOneGroupLeavesTheOthers() throws {
        var state = AlertState()
        var mute = Mute(id: "1", rule: "api-errors", created: 0, until: 10, createdBy: nil, comment: nil)
        mute.group = "route=/profile"
        state.mutes = [mute]
        #expect(state.activeMute(for: "api-errors", group: AlertGroup(keys: [.route], values: ["/profile"]), at: 5) != nil)
        #expect(state.activeMute(for: "api-errors", group: AlertGroup(keys: [.route], values: ["/feed"]), at: 5) == nil)
        #expect(state.activeMute(for: "api-errors", at: 5) == nil)
        #expect(try AlertGroup.parse(["route=/profile"]).get() == AlertGroup(keys: [.route], values: ["/profile"]))
        #expect(try AlertGroup.parse(["app_version=2.1", "route=/a=b"]).get().label == "route=/a=b app_version=2.1")
        #expect((try? AlertGroup.parse(["path=/x"]).get()) == nil)
    }

    @Test func aHostileRouteCannotTakeAnotherGroupsKey() {
        // U+0001 and U+0002 are the counting key's separators; a route holding them keeps a key of its own.
        let a = AlertGroup.countingKey(["/a\u{1}x", "h"]), b = AlertGroup.countingKey(["/a", "x\u{1}h"])
        #expect(a != b)
        #expect(AlertGroup.countingKey(["\u{2}other"]) != AlertGroup.otherCountingKey)
        let long = AlertGroup(keys: [.route], values: [String(repeating: "/x", count: 1000) + "\u{1B}[31m"])
        let id = Incident(rule: "r", group: long, started: now).id
        #expect(id.count < 255 && !id.contains("\u{1B}"))
        #expect(Incident(rule: "r", group: long, started: now).id != Incident(rule: "r", group: AlertGroup(keys: [.route], values: [String(repeating: "/x", count: 1000)]), started: now).id)
    }

    // MARK: - Prometheus

    @Test func thePrometheusTranslationSumsByTheCollectorsLabels() throws {
        let rules = try AlertRules.parse(Self.rules("    group_by: [route, host]"))
        let yaml = PrometheusRuleTranslation(rules).yaml
        #expect(yaml.contains("sum by (url_template, server_address) (increase(apitrace_http_client_requests_total{http_response_status_code!~\"\"}[5m]) or increase("))
        #expect(!yaml.contains("vector(0)"))
        #expect(yaml.contains("{{ $labels.url_template }} {{ $labels.server_address }} (api-errors: failed requests)"))
        // The same thresholds and guards as without group_by.
        let ungrouped = PrometheusRuleTranslation(try AlertRules.parse(Self.rules(""))).yaml
        for guardText in ["> 0.144", ">= 20", "apitrace:rule_failure_ratio_lower_bound:5m", "keep_firing_for: 10m"] {
            #expect(yaml.contains(guardText) && ungrouped.contains(guardText), "\(guardText)")
        }
    }
}
