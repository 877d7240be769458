import APITraceCapture
import APITraceTesting
import Foundation
import Testing

/// `recordError` caches the printed text of enum cases without payload; everything else must still
/// be printed per error.
@Suite("recordError messages")
struct RecordErrorMessageTests {
    enum Plain: Error { case offline, expired }
    enum WithPayload: Error { case badStatus(Int) }
    final class Counter: @unchecked Sendable { var value = 0 }
    enum Described: Error, CustomStringConvertible {
        case quota
        static let calls = Counter()
        var description: String {
            Self.calls.value += 1
            return "quota call \(Self.calls.value)"
        }
    }

    @Test("each message is what String(describing:) prints for that error, cached or not")
    func messages() {
        let traces = TestTracer()
        let errors: [any Error] = [
            Plain.offline, Plain.expired, Plain.offline, WithPayload.badStatus(500), WithPayload.badStatus(503),
            Described.quota, Described.quota,
        ]
        for error in errors { traces.tracer.recordError(error) }
        let recorded = traces.errors
        #expect(recorded.map(\.message) == ["offline", "expired", "offline", "badStatus(500)", "badStatus(503)", "quota call 1", "quota call 2"])
        #expect(recorded.map(\.identity).map { $0.components(separatedBy: ".").suffix(2).joined(separator: ".") } == [
            "Plain.offline", "Plain.expired", "Plain.offline", "WithPayload.badStatus", "WithPayload.badStatus", "Described.quota", "Described.quota",
        ])
    }
}
