import APITraceAlerting
import APITraceTestSupport
import Testing

@Suite struct PagerDutyEventTests {
    @Test func pagerDutySummaryIsCutTo1024Characters() {
        let n = AlertNotification(action: .trigger, rule: "r", incidentID: "id", severity: .critical,
                                  summary: String(repeating: "x", count: 5000), timestamp: TraceFixture.now)
        #expect(n.summary.count == 1024)
        #expect(PagerDutyEvent(n, routingKey: "k", source: "h").payload?.summary.count == 1024)
    }
}
