import APITraceAlerting
import APITraceTestSupport
import Foundation
import Testing

@Suite("apitrace rules")
struct RulesCommandTests {
    static let fleetRules = AlertRuleFixtures.fleet

    @Test("apitrace rules: an invalid rules file exits 2 naming file, line and field; notes go to standard error")
    func command() async throws {
        let dir = TemporaryDirectory()
        try "rules:\n  - name: x\n    slo: 99\n".write(toFile: dir.file("bad.yaml"), atomically: true, encoding: .utf8)
        let bad = try await apitrace(["rules", "--format", "prometheus", "--rules", dir.file("bad.yaml")])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("bad.yaml:3:") && bad.stderr.contains("rules[0].slo"), "\(bad.stderr)")
        #expect(bad.stdout.isEmpty)

        try Self.fleetRules.write(toFile: dir.file("fleet.yaml"), atomically: true, encoding: .utf8)
        let good = try await apitrace(["rules", "--format", "prometheus", "--rules", dir.file("fleet.yaml"), "--output", dir.file("out.yaml")])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stderr.contains("apitrace: note: rule odd-latency:"))
        #expect(try String(contentsOfFile: dir.file("out.yaml"), encoding: .utf8) == PrometheusRuleTranslation(try AlertRules.parse(Self.fleetRules, file: "fleet.yaml")).yaml.replacingOccurrences(of: "from fleet.yaml", with: "from \(dir.file("fleet.yaml"))"))
    }
}
