import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The one failed status and the one retryable status (`RequestOutcome+Status`), checked against
/// the outcome table of Docs/trace-format.md written out here independently, and against what the
/// reading layer makes of a status on a line.
@Suite("RequestOutcome: failed and retryable statuses")
struct RequestOutcomeStatusTests {
    /// Docs/trace-format.md, by hand: 500 and up fail; 408, 429 and 500 and up are retried.
    static func documentedFailed(_ status: Int) -> Bool { status >= 500 }
    static func documentedRetryable(_ status: Int) -> Bool { status == 408 || status == 429 || status >= 500 }

    @Test("failedStatuses is every trace status whose outcome is server_error: 500 to 999")
    func failedStatuses() {
        #expect(RequestOutcome.failedStatuses == 500...999)
        for status in RequestOutcome.traceStatuses {
            let fails = RequestOutcome.of(status: status) == .serverError
            #expect(RequestOutcome.failedStatuses.contains(status) == fails, "\(status)")
            #expect(RequestOutcome.isFailed(status: status) == Self.documentedFailed(status), "\(status)")
        }
    }

    @Test("retryable: 408, 429 and every failed status; no other status, for a sender's whole range")
    func retryable() {
        for status in 0...1200 {
            #expect(RequestOutcome.isRetryable(status: status) == Self.documentedRetryable(status), "\(status)")
        }
    }

    @Test("a status of 600 to 999 on a line reads as server_error, weighs 1 and fails, as a 5xx does",
          arguments: [500, 599, 600, 700, 799, 999])
    func sixHundredsOnALine(status: Int) throws {
        let line = #"{"type":"request","ts":"2026-11-22T10:00:00.000Z","method":"GET","route":"/apps","status":\#(status),"duration_ms":5,"sample_rate":0.5}"#
        guard case .event(let event) = try TraceLine.decode(line), case .request(let request) = event.payload else {
            Issue.record("not a request")
            return
        }
        #expect(request.outcome == .serverError)
        #expect(request.outcome.isFailure)
        // A failure is never sampled: its sample_rate is ignored.
        #expect(request.weight == 1)
    }
}
