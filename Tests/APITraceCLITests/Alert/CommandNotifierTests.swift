@testable import APITraceAlerting
import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

/// The `command` notifier with real child processes: ones that never read their input, never
/// exit, or look for secrets in their environment.
@Suite(.serialized) struct CommandNotifierTests {
    func rules(_ command: String, in dir: TemporaryDirectory, timeout: String = "2s") throws -> String {
        try TraceFixture.rules("""
            rules:
              - {name: api, slo: 0.99, notify: [script]}
            notifiers:
              script:
                type: command
                timeout: \(timeout)
                max_attempts: 1
                command: '\(command)'
            """, in: dir)
    }

    func alert(_ dir: TemporaryDirectory, _ rules: String, at minutes: Int64 = 0, environment: [String: String] = [:]) async throws -> ProcessResult {
        try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"), "--now", AlertCommandTests.at(minutes)],
                           environment: ["APITRACE_TEST_OUT": dir.path].merging(environment) { $1 })
    }

    /// An `APITRACE_*` variable is passed to the child, unless a notifier reads its secret from it.
    @Test func aSecretInAnAPITRACEVariableStaysOutOfTheChildsEnvironment() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let rules = try TraceFixture.rules("""
            rules:
              - {name: api, slo: 0.99, notify: [script]}
            notifiers:
              script: {type: command, timeout: 2s, max_attempts: 1, command: 'env > "$APITRACE_TEST_OUT/env.txt"'}
              oncall: {type: pagerduty, routing_key_env: APITRACE_PD_KEY}
              chat: {type: slack, webhook_url_env: APITRACE_SLACK_URL}
            """, in: dir)
        let run = try await alert(dir, rules, environment: ["APITRACE_PD_KEY": "pd-secret-9", "APITRACE_SLACK_URL": "https://hooks.slack.com/services/T/B/slack-secret-8", "APITRACE_TEAM": "payments"])
        #expect(run.status == 0, "\(run.stderr)")
        let text = try String(contentsOfFile: dir.file("env.txt"), encoding: .utf8)
        #expect(!text.contains("pd-secret-9") && !text.contains("slack-secret-8"))
        #expect(text.contains("APITRACE_TEAM=payments\n"))
    }

    @Test func theChildSeesOnlyPathHomeAndAPITRACEVariables() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let run = try await alert(dir, try rules(#"env > "$APITRACE_TEST_OUT/env.txt""#, in: dir), environment: [
            "PD_ROUTING_KEY": "pd-secret-1", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/slack-secret-2",
            "AWS_SECRET_ACCESS_KEY": "aws-secret-3", "HOME": "/home/oncall",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let text = try String(contentsOfFile: dir.file("env.txt"), encoding: .utf8)
        for secret in ["pd-secret-1", "slack-secret-2", "aws-secret-3"] { #expect(!text.contains(secret)) }
        let names = Set(text.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        // /bin/sh adds PWD (and some shells SHLVL, _, OLDPWD) itself.
        let shellOwn: Set = ["PWD", "SHLVL", "_", "OLDPWD"]
        #expect(names.subtracting(shellOwn).allSatisfy { $0 == "PATH" || $0 == "HOME" || $0.hasPrefix("APITRACE_") }, "\(names.sorted())")
        #expect(names.isSuperset(of: ["PATH", "HOME", "APITRACE_RULE", "APITRACE_ACTION", "APITRACE_TEST_OUT"]))
        #expect(text.contains("HOME=/home/oncall\n") && text.contains("APITRACE_RULE=api\n"))
    }

    @Test(arguments: ["exit 0", "exec 0<&-; sleep 0.2; exit 0", "exec 0<&-; exit 3"])
    func aCommandThatNeverReadsItsInputCannotKillTheRun(_ command: String) async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        let run = try await alert(dir, try rules(command, in: dir))
        // Before: SIGPIPE killed apitrace (status 141) inside the lock.
        let expected: Int32 = command.hasSuffix("exit 3") ? 1 : 0
        #expect(run.status == expected, "\(run.stderr)")
        #expect(try StateStore(path: dir.file("state.json")).read().incidents["api"]?.triggers == 1)
    }

    @Test func aCommandThatNeverExitsIsKilledWithItsWholeProcessGroup() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        // A child that starts a grandchild and waits on it, ignoring SIGTERM: only SIGKILL to the group ends both.
        let command = #"trap "" TERM; sleep 300 & echo $! > "$APITRACE_TEST_OUT/grandchild.pid"; wait; wait"#
        let run = try await alert(dir, try rules(command, in: dir, timeout: "2s"))
        #expect(run.status == 1)
        #expect(run.stderr.contains("ran longer than 2.0 seconds; its process group was killed") || run.stderr.contains("its process group was killed"))
        let pidText = try String(contentsOfFile: dir.file("grandchild.pid"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = try #require(Int32(pidText))
        #expect(!Self.isAlive(pid), "the grandchild \(pid) outlived the timeout")
        let state = try StateStore(path: dir.file("state.json")).read()
        #expect(state.pending.count == 1 && state.incidents["api"]?.pages == 0)
    }

    /// Alive and not a zombie waiting for a parent that is gone (in a container PID 1 may never reap it).
    static func isAlive(_ pid: Int32) -> Bool {
        for _ in 0..<50 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
            let state = stat.split(separator: ")").last?.split(separator: " ").first
            if state == "Z" || state == "X" { return false }
            usleep(20_000)
        }
        return true
    }

    @Test func overlappingRunsDoNotWaitOnEachOthersDeliveries() async throws {
        let dir = TemporaryDirectory()
        _ = try AlertCommandTests.spikeTraces(in: dir)
        // The delivery takes 4 s; the second run gives up on the lock after 1 s: before, it exited 4.
        let rules = try rules(#"sleep 4; echo page >> "$APITRACE_TEST_OUT/pages.txt""#, in: dir, timeout: "20s")
        async let first = alert(dir, rules, at: 0)
        // Wait until the first run has claimed its delivery (the state names it), then overlap it.
        var claimed = false
        for _ in 0..<200 where !claimed {
            try await Task.sleep(for: .milliseconds(50))
            claimed = ((try? StateStore(path: dir.file("state.json")).read())?.pending.first?.claimedUntil) != nil
        }
        #expect(claimed)
        let second = try await apitrace(["alert", dir.file("traces"), "--rules", rules, "--state", dir.file("state.json"),
                                         "--now", AlertCommandTests.at(1), "--lock-timeout", "1s"], environment: ["APITRACE_TEST_OUT": dir.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stdout.contains("TRIGGERED") && !second.stdout.contains("RETRY"))
        let firstRun = try await first
        #expect(firstRun.status == 0, "\(firstRun.stderr)")
        #expect(try String(contentsOfFile: dir.file("pages.txt"), encoding: .utf8) == "page\n")
        let state = try StateStore(path: dir.file("state.json")).read()
        #expect(state.pending.isEmpty && state.incidents["api"]?.pages == 1 && state.lastRun == AlertCommandTests.at(1))
    }
}
