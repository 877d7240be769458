import APITraceTestSupport
import Foundation
import Testing

/// The page names what accounts for the extra failures: the alert's evidence window against the
/// six hours before it, through the built binary and a command notifier, as cron runs it. The
/// evidence window is an hour here: over the default shortest window (5 minutes) a few dozen
/// failures decide the ranking, and noise can make the plain route the top line.
@Suite("alert evidence: most of the extra failures")
struct AlertExtraFailuresTests {
    @Test("a release breaking /apps/{id} pages with \"Most of the extra failures: N% /apps/{id} on app 2.4.0\"")
    func pageNamesTheRelease() async throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        try await offPool { try ReleaseTraffic.write(to: dir.file("traces")) }
        let pages = dir.file("pages.jsonl")
        try """
            rules:
              - name: api
                slo: 0.999
                evidence_window: 1h
                notify: [log]
            notifiers:
              log: {type: command, command: "cat >> \(pages); echo >> \(pages)"}
            """.write(toFile: dir.file("rules.yaml"), atomically: true, encoding: .utf8)
        let apitrace = try builtProduct("apitrace").path
        for t in [ReleaseTraffic.end - 600_000, ReleaseTraffic.end - 300_000, ReleaseTraffic.end] {
            let out = try await runOffPool(apitrace, [
                "alert", dir.file("traces"), "--rules", dir.file("rules.yaml"), "--state", dir.file("state.json"), "--now", ReleaseTraffic.iso(t),
            ])
            #expect(out.status == 0, "\(String(decoding: out.stderr, as: UTF8.self))")
        }
        let text = try String(contentsOfFile: pages, encoding: .utf8)
        let sent = text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let trigger = try #require(sent.first { $0["action"] as? String == "trigger" }, "no page: \(text)")
        let evidence = try #require(trigger["evidence"] as? [String: Any])
        let extra = try #require(evidence["extra_failures"] as? [String: Any], "\(evidence)")
        #expect(extra["row"] as? String == "/apps/{id} on app 2.4.0", "\(extra)")
        #expect((extra["share"] as? Double ?? 0) >= 0.5)
        let line = extra["line"] as? String ?? ""
        #expect(line.hasPrefix("Most of the extra failures: ") && line.hasSuffix("% /apps/{id} on app 2.4.0"), "\(line)")
        #expect(((trigger["summary"] as? String) ?? "").contains("most of the extra failures: "), "\(trigger["summary"] ?? "")")
        #expect(((extra["baseline"] as? String) ?? "").contains("6h"))
    }
}
