import APITraceAlerting
import APITraceFormat
import APITraceTestSupport
import Testing

/// Drives the incident state machine minute by minute with detections made up for each step:
/// the state machine itself is pure, so no traces are needed here (the CLI tests run it on traces).
@Suite struct IncidentTrackerTests {
    let start = TraceFixture.now.millisecondsSince1970
    let minute = TraceFixture.minute
    var rule = AlertRule(name: "api", slo: 0.99, repeatInterval: .hours(1), resolveAfter: .minutes(15))

    func detection(_ firing: Bool, at t: Int64) -> Detection {
        Detection(rule: "api", at: t, firing: firing, checks: [.init(
            detection: "burn rate 1h/5m > 14.4", window: .minutes(5), totals: .init(requests: 100, failures: firing ? 40 : 0),
            thresholdRatio: 0.144, burnRate: firing ? 40 : 0, burnRateThreshold: 14.4, passed: firing)])
    }

    /// Runs one evaluation a minute over `firing` (one Bool per minute); returns the transitions that sent something.
    func replay(_ firing: [Bool], state: inout AlertState) -> [(minute: Int, action: AlertNotification.Action, repeat: Bool)] {
        var sent: [(Int, AlertNotification.Action, Bool)] = []
        for (m, fires) in firing.enumerated() {
            let t = start + Int64(m) * minute
            let d = detection(fires, at: t)
            let (_, notification) = IncidentTracker.advance(&state, rule: rule, detection: d, evidence: {
                AlertEvidence(rule: rule, detection: d, tally: EvidenceTally(), traceDirectory: "traces")
            }, at: t)
            if let notification { sent.append((m, notification.action, notification.isRepeat)) }
        }
        return sent
    }

    @Test func oneIncidentPagesOnceAndResolvesOnce() {
        var state = AlertState()
        // 10 firing minutes, then 30 calm ones.
        let sent = replay(Array(repeating: true, count: 10) + Array(repeating: false, count: 30), state: &state)
        #expect(sent.map(\.minute) == [0, 25])
        #expect(sent.map(\.action) == [.trigger, .resolve])
        #expect(state.incidents.isEmpty)
        #expect(state.closed.count == 1 && state.closed[0].triggers == 1 && state.closed[0].pages == 0)
    }

    @Test func aFlapWithinResolveAfterKeepsTheIncident() {
        var state = AlertState()
        // firing 5, calm 10 (< 15), firing 5, calm 20: one trigger, one resolve 15 minutes into the last calm stretch.
        let pattern = Array(repeating: true, count: 5) + Array(repeating: false, count: 10) + Array(repeating: true, count: 5) + Array(repeating: false, count: 20)
        let sent = replay(pattern, state: &state)
        #expect(sent.map(\.action) == [.trigger, .resolve])
        #expect(sent.map(\.minute) == [0, 35])
        #expect(state.closed.first?.started == start)
    }

    @Test func aLongIncidentRepeatsAfterTheInterval() {
        var state = AlertState()
        let sent = replay(Array(repeating: true, count: 130), state: &state)
        #expect(sent.map(\.minute) == [0, 60, 120])
        #expect(sent.map(\.repeat) == [false, true, true])
        #expect(state.incidents["api"]?.triggers == 3)
    }

    @Test func aMutedIncidentIsRecordedNotPagedAndPagesWhenTheMuteEndsIfStillFiring() {
        var state = AlertState()
        state.mutes = [Mute(id: "m1", rule: "api", created: start, until: start + 10 * minute, createdBy: "test", comment: "deploy")]
        let sent = replay(Array(repeating: true, count: 12), state: &state)
        #expect(sent.map(\.minute) == [10])
        #expect(state.incidents["api"]?.mutedEvaluations == 10)
    }

    @Test func anIncidentMutedThroughoutClosesWithoutAnyMessage() {
        var state = AlertState()
        state.mutes = [Mute(id: "m1", rule: nil, created: start, until: start + 60 * minute, createdBy: nil, comment: nil)]
        let sent = replay(Array(repeating: true, count: 5) + Array(repeating: false, count: 20), state: &state)
        #expect(sent.isEmpty)
        #expect(state.closed.count == 1 && state.closed[0].triggers == 0 && state.closed[0].mutedEvaluations == 5)
    }
}
