import APITraceAlerting
import APITraceTestSupport
import Foundation
import Testing

@Suite("Prometheus rules translation")
struct PrometheusRuleTranslationTests {
    static let samples = AlertRuleFixtures.samplesPath
    static let fleetRules = AlertRuleFixtures.fleet

    func translated(_ text: String) throws -> PrometheusRuleTranslation {
        PrometheusRuleTranslation(try AlertRules.parse(text, file: "fleet.yaml"))
    }

    @Test("status ranges and globs become anchored RE2 alternatives")
    func regexes() {
        #expect(PromQLSelector.statusRegex([500...599]) == "5[0-9][0-9]")
        #expect(PromQLSelector.statusRegex([429...429, 500...503]) == "429|500|501|502|503")
        #expect(PromQLSelector.statusRegex([400...599]) == "4[0-9][0-9]|5[0-9][0-9]")
        #expect(PromQLSelector.statusRegex([495...512]) == "495|496|497|498|499|50[0-9]|510|511|512")
        #expect(PromQLSelector.globRegex("URLError.*") == #"URLError\..*"#)
        #expect(PromQLSelector.globRegex("/apps/{id}*") == #"/apps/\{id\}.*"#)
        #expect(PromQLSelector.quote(#"a"b\c"#) == #""a\"b\\c""#)
    }

    @Test("the thresholds are apitrace alert's: factor times the budget, capped a quarter of the way to 100%")
    func thresholds() throws {
        let yaml = try translated(Self.fleetRules).yaml
        // api-errors at 99%: 14.4 x 1% and 6 x 1%.
        #expect(yaml.contains("apitrace:rule_failure_ratio:5m{apitrace_rule=\"api-errors\"} > 0.144"))
        #expect(yaml.contains("apitrace:rule_failure_ratio:30m{apitrace_rule=\"api-errors\"} > 0.06"))
        // slow-search at 95%: 14.4 x 5% = 72% is capped at 5% + 95% / 4 = 28.75%.
        #expect(yaml.contains("apitrace:rule_failure_ratio:5m{apitrace_rule=\"slow-search\"} > 0.2875"))
        #expect(yaml.contains("keep_firing_for: 10m"))
    }

    @Test("promtool check rules accepts the translation of Samples/alert-rules.yaml", .requires(.promtool))
    func sampleRulesPassPromtool() async throws {
        let translation = PrometheusRuleTranslation(try AlertRules.load(path: Self.samples))
        try await expectPromtoolAccepts(translation.yaml)
        #expect(translation.yaml.contains("- alert: 'api-errors'"))
        #expect(translation.yaml.contains("- alert: 'news-spike'"))
        #expect(translation.yaml.contains("offset 6d23h30m"), "same_hour_of_week is the hour centred a week back")
    }

    @Test("promtool check rules accepts latency, route, app-version and error-list rules", .requires(.promtool))
    func fleetRulesPassPromtool() async throws {
        let translation = try translated(Self.fleetRules)
        try await expectPromtoolAccepts(translation.yaml)
        #expect(translation.yaml.contains(#"url_template=~"/news.*""#))
        #expect(translation.yaml.contains(#"app_version="2.1.0""#))
        #expect(translation.yaml.contains(#"error_type=~"URLError\\.notConnectedToInternet""#))
        #expect(translation.yaml.contains(#"error_type!~"URLError\\.notConnectedToInternet|URLError\\.cannotFindHost""#))
        #expect(translation.yaml.contains(#"http_client_request_duration_seconds_bucket{url_template="/search",le=~"1\\.0|1"}"#))
        #expect(translation.notes.contains { $0.hasPrefix("rule odd-latency:") && $0.contains("750 ms") }, "\(translation.notes)")
        #expect(translation.notes.contains { $0.hasPrefix("rule checkout-spike:") }, "\(translation.notes)")
        #expect(translation.notes.contains { $0.hasPrefix("rule new-failures: new_failures is not translated") }, "\(translation.notes)")
        #expect(!translation.yaml.contains("new-failures"))
    }

    func expectPromtoolAccepts(_ yaml: String) async throws {
        let dir = TemporaryDirectory()
        let file = dir.file("rules.yaml")
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: file))
        let result = try await Promtool.run(["check", "rules", file])
        #expect(result.status == 0, "promtool rejected the rules:\n\(result.output)\n\(yaml)")
    }
}
