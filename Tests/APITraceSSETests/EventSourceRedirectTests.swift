import APITraceCapture
import APITraceFormat
import APITraceSSE
import APITraceTesting
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

/// The credentials a client under test sends; `X-Api-Key` is marked secret by the app, `X-Trace-Tag` is not.
let credentialHeaders = [("Authorization", "Bearer s3cr3t"), ("Cookie", "session=c00kie"), ("X-Api-Key", "k3y"),
                         ("X-Trace-Tag", "visible")]

extension TestServer.SSELog.Request {
    /// Which of the credential headers arrived.
    var credentials: [String] { ["authorization", "cookie", "x-api-key"].filter { headers[$0] != nil } }
}

/// `/redirect?status=..&to=target`, with `target` percent-encoded.
func redirectPath(to target: String, status: Int = 302) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return "/redirect?status=\(status)&to=" + target.addingPercentEncoding(withAllowedCharacters: allowed)!
}

@Suite("EventSource redirects: credentials never follow to another origin")
struct EventSourceRedirectTests {
    func source(_ base: URL, _ path: String, _ traces: TestTracer) -> EventSource {
        makeSource(base, path, traces: traces) {
            $0.headers = credentialHeaders
            $0.secretHeaders = ["x-api-key"]
        }
    }

    @Test("a redirect to another port gets no Authorization, Cookie or app-marked secret header, on every reconnect",
          arguments: [301, 302, 303, 307])
    func otherPort(_ status: Int) async throws {
        try await TestServer.runSSE { first, firstLog in
            try await TestServer.runSSE { second, secondLog in
                let traces = TestTracer()
                let path = redirectPath(to: second.absoluteString + "/headers-stream", status: status)
                let events = try await collect(source(first, path, traces))
                #expect(events.map(\.data) == ["ok"])
                // The app's own origin saw its credentials (the redirect itself).
                #expect(firstLog.requests.allSatisfy { $0.credentials == ["authorization", "cookie", "x-api-key"] })
                let seen = secondLog.requests
                #expect(seen.count == 2, "the stream, then the reconnect that gets 204")
                #expect(seen.allSatisfy { $0.credentials.isEmpty }, "\(seen.map(\.credentials))")
                #expect(seen.allSatisfy { $0.headers["x-trace-tag"] == "visible" && $0.headers["accept"] == "text/event-stream" })
                #expect(seen.last?.lastEventID == "1")
            }
        }
    }

    @Test("127.0.0.1 and localhost are different origins, even on the same port")
    func localhostIsAnotherOrigin() async throws {
        try await TestServer.runSSE { base, log in
            let port = base.port ?? 0
            let traces = TestTracer()
            _ = try await collect(source(base, redirectPath(to: "http://localhost:\(port)/headers-stream"), traces))
            let streams = log.requests.filter { $0.path == "/headers-stream" }
            #expect(streams.count == 2)
            #expect(streams.allSatisfy { $0.credentials.isEmpty })
        }
    }

    @Test("a same-origin redirect keeps the credentials, absolute or relative", arguments: [true, false])
    func sameOriginKeepsThem(_ absolute: Bool) async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let target = absolute ? base.absoluteString + "/headers-stream" : "/headers-stream"
            let events = try await collect(source(base, redirectPath(to: target, status: 307), traces))
            #expect(events.map(\.data) == ["ok"])
            let streams = log.requests.filter { $0.path == "/headers-stream" }
            #expect(streams.count == 2)
            #expect(streams.allSatisfy { $0.credentials == ["authorization", "cookie", "x-api-key"] })
        }
    }

    @Test("once a redirect left the origin, a redirect back to it does not bring the credentials back")
    func leavingTheOriginIsForGood() async throws {
        try await TestServer.runSSE { first, firstLog in
            try await TestServer.runSSE { second, secondLog in
                let traces = TestTracer()
                let back = first.absoluteString + "/headers-stream"
                let path = redirectPath(to: second.absoluteString + redirectPath(to: back))
                _ = try await collect(source(first, path, traces))
                #expect(secondLog.requests.allSatisfy { $0.credentials.isEmpty })
                let streams = firstLog.requests.filter { $0.path == "/headers-stream" }
                #expect(streams.count == 2)
                #expect(streams.allSatisfy { $0.credentials.isEmpty })
            }
        }
    }

    @Test("a redirect loop ends each attempt after 20 redirects (too_many_redirects) and reconnects with backoff")
    func redirectLoop() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let policy = ReconnectPolicy(initialDelay: .milliseconds(50), minimumDelay: .milliseconds(50),
                                         maximumDelay: .milliseconds(200))
            let source = makeSource(base, "/redirect-loop", traces: traces, policy: policy)
            source.start()
            for _ in 0..<2400 where traces.sse(.reconnect).count < 2 { try await Task.sleep(for: .milliseconds(25)) }
            source.close()
            await source.waitUntilStopped()
            let atClose = log.requests.count
            try await Task.sleep(for: .milliseconds(300))
            #expect(log.requests.count == atClose, "no redirect is followed after close()")
            let closes = traces.sse(.close).filter { $0.reason != "closed_by_client" }
            #expect(closes.count >= 2)
            #expect(closes.allSatisfy { $0.reason == "too_many_redirects" })
            #expect(traces.sse(.open).isEmpty)
            #expect(traces.sse(.reconnect).count >= 2)
            // The first request and 20 redirects per attempt, never more.
            #expect(log.requests.count <= 21 * traces.sse(.close).count)
        }
    }

    @Test("a redirect to a scheme other than http(s) is not followed: the attempt ends and the client reconnects",
          arguments: ["file:///etc/passwd", "ftp://127.0.0.1/stream"])
    func otherScheme(_ target: String) async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let source = source(base, redirectPath(to: target), traces)
            source.start()
            for _ in 0..<1200 where traces.sse(.reconnect).count < 2 { try await Task.sleep(for: .milliseconds(25)) }
            source.close()
            await source.waitUntilStopped()
            let closes = traces.sse(.close).filter { $0.reason != "closed_by_client" }
            #expect(closes.count >= 2)
            #expect(closes.allSatisfy { $0.reason == "redirect_not_http" }, "\(closes.map(\.reason))")
            #expect(traces.sse(.open).isEmpty)
            #expect(log.requests.allSatisfy { $0.path == "/redirect" })
        }
    }
}
