import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceTesting
import Foundation
import Testing

/// Every place a secret can enter capture, each with a distinct secret; none may survive in any
/// event (as written to a trace line) or in any of apitrace's own log lines.
@Suite("No secret survives capture")
struct RedactionCoverageTests {
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var secret: String
        var record: @Sendable (APITracer, URL) async throws -> Void
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let cases: [Case] = [
        Case(description: "cookie in user info", secret: "cookie-s3cr3t-1") { tracer, _ in
            tracer.recordError(Failure(description: "x"), userInfo: ["cookie": "session=cookie-s3cr3t-1"])
        },
        Case(description: "authorization without a scheme in user info", secret: "auth-s3cr3t-2") { tracer, _ in
            tracer.recordError(Failure(description: "x"), userInfo: ["Authorization": "auth-s3cr3t-2"])
        },
        Case(description: "proxy-authorization in log metadata", secret: "proxy-s3cr3t-3") { tracer, _ in
            tracer.log(.error, "upstream refused", metadata: ["proxy-authorization": "proxy-s3cr3t-3"])
        },
        Case(description: "cookie in log metadata", secret: "cookie-s3cr3t-4") { tracer, _ in
            tracer.log(.error, "refused", metadata: ["Cookie": "id=cookie-s3cr3t-4"])
        },
        Case(description: "a printed Swift dictionary in user info", secret: "sk_live_s3cr3t5") { tracer, _ in
            let headers = ["X-Api-Key": "sk_live_s3cr3t5", "Accept": "*/*"]
            tracer.recordError(Failure(description: "x"), userInfo: ["headers": String(describing: headers)])
        },
        Case(description: "JSON in an error message", secret: "tok-s3cr3t-6") { tracer, _ in
            tracer.recordError(Failure(description: #"rejected {"access_token":"tok-s3cr3t-6","page":2}"#))
        },
        Case(description: "quoted label with single quotes in a decode failure", secret: "pw-s3cr3t-7") { tracer, _ in
            tracer.recordDecodeFailure(.init(entity: "Login", kind: .typeMismatch, path: "user", message: "bad value near 'password': 'pw-s3cr3t-7'"))
        },
        Case(description: "matrix parameter session id in a path", secret: "JSESSIONs3cr3t8") { tracer, base in
            let backend = TracingBackend(URLSessionBackend(), tracer: tracer)
            _ = try await backend.perform(BackendRequest(url: URL(string: base.absoluteString + "/cart;jsessionid=JSESSIONs3cr3t8/items")!))
        },
        Case(description: "random token in a path", secret: "Zx8kQ2mN7pL4vB9cR1tY") { tracer, base in
            let backend = TracingBackend(URLSessionBackend(), tracer: tracer)
            _ = try await backend.perform(BackendRequest(url: URL(string: base.absoluteString + "/reset/Zx8kQ2mN7pL4vB9cR1tY")!))
        },
        Case(description: "URL with a token in a transport error", secret: "qtok-s3cr3t-10") { tracer, _ in
            let backend = TracingBackend(URLSessionBackend(), tracer: tracer)
            // Port 9 on loopback refuses: the error names the URL, query included.
            _ = try? await backend.perform(BackendRequest(url: URL(string: "http://127.0.0.1:9/a?token=qtok-s3cr3t-10")!))
        },
        Case(description: "user-supplied route with a query and matrix parameter", secret: "route-s3cr3t-11") { tracer, _ in
            let request = tracer.startRequest(method: "GET", route: "/a;sid=route-s3cr3t-11/b?key=route-s3cr3t-11", host: "h")
            request.finish(status: 200, bytesIn: 0)
        },
        Case(description: "sse close reason and last event id", secret: "sse-s3cr3t-12") { tracer, _ in
            tracer.record(TraceEvent(.sse(.init(
                phase: .fail, route: "/stream?token=sse-s3cr3t-12", attempt: 1,
                lastEventID: "Bearer sse-s3cr3t-12", reason: "Authorization: Bearer sse-s3cr3t-12"
            ))))
        },
        Case(description: "error route", secret: "eroute-s3cr3t-13") { tracer, _ in
            tracer.recordError(Failure(description: "x"), route: "/pay;token=eroute-s3cr3t-13")
        },
        Case(description: "route set on a started request", secret: "late-s3cr3t-14") { tracer, _ in
            var request = tracer.startRequest(method: "GET", route: "/a", host: "h")
            request.route = "/b;sid=late-s3cr3t-14?key=late-s3cr3t-14"
            request.fail(Failure(description: "x"))
        },
        Case(description: "route of a finished request set after the start", secret: "late-s3cr3t-15") { tracer, _ in
            var request = tracer.startRequest(method: "GET", route: "/a", host: "h")
            request.route = "/b;sid=late-s3cr3t-15?key=late-s3cr3t-15"
            request.finish(status: 200, bytesIn: 0)
        },
    ]

    @Test("the secret is in no event and no log line", arguments: cases)
    func noSecret(_ testCase: Case) async throws {
        let logs = LogCollector()
        let traces = TestTracer(configuration: .init(logging: logs.function()))
        try await TestServer.run { base in
            try await testCase.record(traces.tracer, base)
        }
        traces.tracer.flush()
        let lines = traces.events.map(\.jsonLine)
        #expect(!lines.isEmpty || !logs.records.isEmpty, "the case recorded nothing, so it proves nothing")
        for line in lines {
            #expect(!line.contains(testCase.secret), "event: \(line)")
        }
        for record in logs.records {
            #expect(!record.formatted.contains(testCase.secret), "log: \(record.formatted)")
            for (key, value) in record.metadata {
                #expect(!value.contains(testCase.secret), "log metadata \(key)")
            }
        }
    }

    @Test("routes lose matrix parameters and random tokens, keep words and dates", arguments: [
        ("/cart;jsessionid=ABC123/items", "/cart/items"),
        ("/reset/Zx8kQ2mN7pL4vB9cR1tY", "/reset/{id}"),
        ("/keys/sk_live_51HxYzAbCdEf0123", "/keys/{id}"),
        ("/blog/release-notes-2024-11-23", "/blog/release-notes-2024-11-23"),
        ("/v2/apps/latest", "/v2/apps/latest"),
        ("/files/quarterly_report_final_v2", "/files/quarterly_report_final_v2"),
    ])
    func routes(path: String, route: String) {
        #expect(RouteNormalizer().normalize(path) == route)
    }
}
