import APITraceAlerting
import APITraceTestSupport
import Foundation
import Testing

/// A `websocket_closes` rule as Prometheus rules over the exporter's WebSocket counter, checked
/// and evaluated by Prometheus' own `promtool`.
@Suite("Prometheus rules of WebSocket close rules")
struct WebSocketRuleTranslationTests {
    static let rules = """
        rules:
          - name: live-comments
            scope: {route: "/news/*"}
            failure: {websocket_closes: true}
            slo: 0.99
        """

    static func closes(abnormal: Bool, codeClass: String, values: String) -> String {
        let labels = "phase=\"close\",url_template=\"/news/{id}/comments\",close_code_class=\"\(codeClass)\",abnormal=\"\(abnormal)\""
        return "      - series: 'apitrace_websocket_events_total{\(labels)}'\n        values: '\(values)'\n"
    }

    @Test("the rule reads closes of the WebSocket counter, never requests", .requires(.promtool))
    func translation() async throws {
        let translation = PrometheusRuleTranslation(try AlertRules.parse(Self.rules))
        let yaml = translation.yaml
        #expect(yaml.contains(#"apitrace_websocket_events_total{phase="close",url_template=~"/news/.*",abnormal="true"}"#), "\(yaml)")
        #expect(yaml.contains(#"apitrace_websocket_events_total{phase="close",url_template=~"/news/.*"}"#))
        #expect(!yaml.contains("apitrace_http_client_requests_total"))
        #expect(yaml.contains("abnormal WebSocket closes"))
        let dir = TemporaryDirectory()
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: dir.file("rules.yaml")))
        let check = try await Promtool.run(["check", "rules", dir.file("rules.yaml")])
        #expect(check.status == 0, "\(check.output)")
    }

    @Test("half the connections dropping for 20 minutes fires; clean closes and failing requests do not", .requires(.promtool))
    func evaluation() async throws {
        let yaml = PrometheusRuleTranslation(try AlertRules.parse(Self.rules)).yaml
        // 32 clean closes a minute throughout; 32 abnormal ones a minute from minute 60 to 80;
        // every request failing all along (a WebSocket rule must not read them).
        var test = "    input_series:\n"
        test += Self.closes(abnormal: false, codeClass: "normal", values: "0+8x600")
        test += Self.closes(abnormal: true, codeClass: "abnormal", values: "0+0x239 0+8x80 640+0x280")
        test += "      - series: 'apitrace_http_client_requests_total{http_request_method=\"GET\",url_template=\"/news/{id}/comments\",http_response_status_code=\"503\",error_type=\"503\",outcome=\"server_error\"}'\n        values: '0+100x600'\n"
        test += "    alert_rule_test:\n"
        for (time, firing) in [("55m", false), ("79m", true), ("140m", false)] {
            test += try PrometheusRuleEvaluationTests.expectation("live-comments", at: time, firing: firing, yaml: yaml, scope: "route=/news/*")
        }
        try await PrometheusRuleEvaluationTests().expectPromtoolPasses(rules: yaml, test: test)
    }
}
