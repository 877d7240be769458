@testable import APITraceAlerting
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceFormat
import Foundation
import Testing

/// Slack, generic webhook and command notifiers, run through the real binary and a real receiver.
@Suite(.serialized) struct NotifierTests {
    @Test func slackWebhookAndCommandGetTheirDocumentedPayloads() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            let rules = try TraceFixture.rules("""
                rules:
                  - name: apps
                    scope: {route: "/apps/{id}"}
                    slo: 0.99
                    severity: error
                    resolve_after: 5m
                    notify: [chat, hook, script]
                notifiers:
                  chat: {type: slack, webhook_url_env: SLACK_URL, timeout: 60s}
                  hook: {type: webhook, webhook_url_env: HOOK_URL}
                  script: {type: command, command: 'cat > "$APITRACE_TEST_OUT/$APITRACE_ACTION.json"; env | grep ^APITRACE_ | sort > "$APITRACE_TEST_OUT/$APITRACE_ACTION.env"'}
                """, in: dir)
            let slackSecret = receiver.url("/slack/T000/B000/XXXXsecret")
            let env = ["SLACK_URL": slackSecret, "HOOK_URL": receiver.url("/hook"), "APITRACE_TEST_OUT": dir.path]
            for minute: Int64 in [0, 5, 10] {
                let run = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("s.json"), "--now", AlertCommandTests.at(minute)], environment: env)
                #expect(run.status == 0, "\(run.stderr)")
                #expect(!run.stdout.contains("XXXXsecret") && !run.stderr.contains("XXXXsecret"))
            }
            // Slack: text (the notification fallback) and blocks of mrkdwn; answered 200 "ok".
            let slack = receiver.requests(to: "/slack/T000/B000/XXXXsecret")
            #expect(slack.count == 2)
            let message = slack[0].json
            let text = try #require(message["text"] as? String)
            #expect(text.hasPrefix("[ERROR] :rotating_light: firing: apps: 40% of requests failing over 1m"))
            let blocks = try #require(message["blocks"] as? [[String: Any]])
            #expect(blocks.map { $0["type"] as? String } == ["section", "context"])
            let section = try #require(blocks[0]["text"] as? [String: Any])
            #expect(section["type"] as? String == "mrkdwn")
            // Evidence window: the shortest long window (the fast pair's 5 m), all at 40%.
            #expect((section["text"] as? String)?.contains("*Top failing routes:* `/apps/{id}` 120/300") == true)
            #expect((slack[1].json["text"] as? String)?.contains(":white_check_mark: resolved") == true)
            // Webhook: the notification itself.
            let hook = receiver.requests(to: "/hook")
            #expect(hook.map { $0.json["action"] as? String } == ["trigger", "resolve"])
            let trigger = hook[0].json
            #expect(trigger["rule"] as? String == "apps" && trigger["severity"] as? String == "error" && trigger["is_repeat"] as? Bool == false)
            #expect((trigger["incident_id"] as? String)?.hasPrefix("apitrace/apps/") == true)
            #expect(hook[1].json["incident_id"] as? String == trigger["incident_id"] as? String)
            let evidence = try #require(trigger["evidence"] as? [String: Any])
            #expect(evidence["scope"] as? String == "route=/apps/{id}")
            // Command: the same JSON on standard input, the essentials in the environment.
            let stdin = try #require(FileManager.default.contents(atPath: dir.file("trigger.json")))
            let parsed = try #require(try JSONSerialization.jsonObject(with: stdin) as? [String: Any])
            #expect(parsed["incident_id"] as? String == trigger["incident_id"] as? String)
            let envText = try String(contentsOfFile: dir.file("trigger.env"), encoding: .utf8)
            #expect(envText.contains("APITRACE_ACTION=trigger\n") && envText.contains("APITRACE_RULE=apps\n") && envText.contains("APITRACE_SEVERITY=error\n"))
            #expect(FileManager.default.fileExists(atPath: dir.file("resolve.json")))
        }
    }

    @Test func anUnsetSecretVariableIsAConfigurationErrorNamingOnlyTheVariable() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let rules = try TraceFixture.rules("""
            rules:
              - {name: a, slo: 0.99, notify: [chat]}
            notifiers:
              chat: {type: slack, webhook_url_env: APITRACE_TEST_UNSET_URL}
            """, in: dir)
        let run = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("s.json"), "--now", AlertCommandTests.at(0)])
        #expect(run.status == 2)
        #expect(run.stderr.contains("APITRACE_TEST_UNSET_URL is not set"))
    }
}
