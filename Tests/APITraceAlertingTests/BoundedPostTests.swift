@testable import APITraceAlerting
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

/// One bounded POST against a real receiver on 127.0.0.1, below the CLI.
@Suite(.serialized) struct BoundedPostTests {
    func post(_ url: String, within seconds: Int64 = 10) async -> BoundedPost.Result {
        await BoundedPost.post(URL(string: url)!, body: Data("{}".utf8), headers: NotificationSender.headers, deadline: .now.advanced(by: .seconds(seconds)))
    }

    @Test func anEndlessErrorBodyIsReadUpToTheCap() async throws {
        try await Receiver.with { receiver in
            receiver.script("/x", [.init(status: 503, body: "busy ", stream: .endless)])
            guard case .answered(let answer) = await post(receiver.url("/x")) else { Issue.record("no answer"); return }
            #expect(answer.status == 503)
            #expect(answer.body.count == BoundedPost.bodyCap && answer.truncated)
            #expect(answer.body.starts(with: Array("busy ".utf8)))
        }
    }

    @Test func aSuccessEndsAtItsHeaders() async throws {
        try await Receiver.with { receiver in
            receiver.script("/x", [.init(status: 200, body: "", stream: .drip(every: .seconds(2)))])
            let started = ContinuousClock.now
            guard case .answered(let answer) = await post(receiver.url("/x")) else { Issue.record("no answer"); return }
            #expect(answer.status == 200)
            #expect(ContinuousClock.now - started < .seconds(8))  // well before the drip could end (never)
        }
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectIsTheAnswerNeverFollowed(_ status: Int) async throws {
        try await Receiver.with { receiver in
            receiver.script("/x", [.redirect(status, to: receiver.url("/elsewhere"))])
            guard case .answered(let answer) = await post(receiver.url("/x")) else { Issue.record("no answer"); return }
            #expect(answer.status == status)
            #expect(answer.location == receiver.url("/elsewhere"))
            #expect(receiver.requests.map(\.path) == ["/x"])
        }
    }

    @Test func aHangingReceiverIsCutAtTheDeadline() async throws {
        try await Receiver.with { receiver in
            receiver.script("/x", [.hang()])
            let started = ContinuousClock.now
            guard case .timedOut = await post(receiver.url("/x"), within: 2) else { Issue.record("not timed out"); return }
            let took = ContinuousClock.now - started
            #expect(took >= .seconds(2) && took < .seconds(8), "\(took)")
        }
    }
}
