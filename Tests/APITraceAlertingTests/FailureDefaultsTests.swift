import APITraceAlerting
import APITraceFormat
import Foundation
import Testing

/// An alert rule's default failure is the format's one failed status (`RequestOutcome.failedStatuses`),
/// in `apitrace alert` and in its Prometheus translation alike.
@Suite("Alert failure defaults")
struct FailureDefaultsTests {
    @Test("the default definition fails every status the readers count as server_error, and no other")
    func defaultFailsWhatReadersFail() {
        let definition = AlertRule.FailureDefinition()
        for status in RequestOutcome.traceStatuses {
            #expect(definition.isFailure(status: status) == (RequestOutcome.of(status: status) == .serverError), "\(status)")
        }
    }

    @Test("statuses from 600 to 999 can be written: single, class, range; past 999 is refused with the range named")
    func writableSixes() throws {
        let rules = try AlertRules.parse("""
            rules:
              - name: sixes
                slo: 0.99
                failure: {statuses: [600, 7xx, 500-999]}
            """)
        #expect(rules.rules[0].failure.statuses == [600...600, 700...799, 500...999])
        let error = #expect(throws: AlertConfigError.self) {
            try AlertRules.parse("rules:\n  - name: x\n    slo: 0.99\n    failure: {statuses: [1000]}\n")
        }
        #expect(error.map { "\($0)".contains("from 100 to 999") } == true, "\(String(describing: error))")
    }

    @Test("the Prometheus status regex of the default matches exactly the failed statuses (checked with a real regex engine)")
    func prometheusRegexOfTheDefault() throws {
        let regex = try NSRegularExpression(pattern: "^(?:" + PromQLSelector.statusRegex(AlertRule.FailureDefinition().statuses) + ")$")
        for status in RequestOutcome.traceStatuses {
            let text = String(status)
            let matched = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            #expect(matched == RequestOutcome.failedStatuses.contains(status), "\(status)")
        }
    }
}
