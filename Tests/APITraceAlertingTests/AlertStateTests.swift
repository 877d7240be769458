import APITraceAlerting
import APITraceTestSupport
import Foundation
import Testing

/// The state file across versions: files written before deliveries were claimed and before
/// "triggered" and "paged" were told apart still read, and mean what they meant.
@Suite struct AlertStateTests {
    @Test func aStateFileFromTheEarlierFormatStillReads() throws {
        let dir = TemporaryDirectory()
        let old = """
            {"version": 1, "lastRun": "2026-11-22T12:05:00.000Z", "mutes": [], "closed": [],
             "incidents": {"api": {"id": "apitrace/api/20261122T120000Z", "rule": "api", "started": 1795348800000,
                                   "lastFiring": 1795349100000, "lastPaged": 1795348800000, "pages": 1, "mutedEvaluations": 0}},
             "pending": [{"notifier": "oncall", "attempts": 3, "lastError": "HTTP 503",
                          "notification": {"action": "trigger", "rule": "api", "incidentID": "apitrace/api/20261122T120000Z",
                                           "severity": "critical", "summary": "api: 40%", "timestamp": "2026-11-22T12:00:00.000Z", "isRepeat": false}}]}
            """
        try old.write(toFile: dir.file("state.json"), atomically: true, encoding: .utf8)
        let state = try StateStore(path: dir.file("state.json")).read()
        let incident = try #require(state.incidents["api"])
        #expect(incident.lastTriggered == 1_795_348_800_000 && incident.triggers == 1)
        #expect(incident.lastPaged == 1_795_348_800_000 && incident.pages == 1)
        #expect(state.pending.count == 1 && state.pending[0].id == nil && state.pending[0].claimedUntil == nil)
        #expect(state.pending[0].isClaimed(at: 0) == false)
        #expect(state.pending[0].notification.scope == nil && state.pending[0].notification.incidentStarted == nil)
    }

    @Test func whatIsWrittenReadsBackTheSame() throws {
        let dir = TemporaryDirectory()
        var state = AlertState()
        var incident = Incident(rule: "api", started: 1_795_348_800_000)
        incident.lastTriggered = 1_795_348_800_000
        incident.triggers = 2
        incident.pages = 1
        state.incidents["api"] = incident
        state.pending = [PendingDelivery(id: "d1", notifier: "oncall", notification: AlertNotification(
            action: .trigger, rule: "api", incidentID: incident.id, severity: .critical, summary: "s", timestamp: TraceFixture.now,
            scope: "all", incidentStarted: TraceFixture.now), attempts: 0, lastError: "", claimedUntil: 42)]
        let store = StateStore(path: dir.file("state.json"))
        try store.write(state)
        #expect(try store.read() == state)
    }
}
