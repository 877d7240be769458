import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

extension AlertCommandTests {
    /// The notifiers follow the uploader's one rule (`RequestOutcome.isRetryable`): 408 Request
    /// Timeout is a try-again, not a refusal of the page.
    @Test func retriesOn408LikeTheUploaderThenDelivers() async throws {
        let dir = TemporaryDirectory()
        _ = try Self.spikeTraces(in: dir)
        try await Receiver.with { receiver in
            receiver.script("/v2/enqueue", [.init(status: 408, body: "request timeout"), .init(status: 408, body: "request timeout")])
            let run = try await Self.alert(dir, try Self.rules(receiver, in: dir), at: 0)
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            #expect(run.stdout.contains("delivered after 3 attempts"), "\(run.stdout)")
            #expect(receiver.requests(to: "/v2/enqueue").count == 3)
        }
    }
}
