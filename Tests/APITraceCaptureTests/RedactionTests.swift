import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceTesting
import Foundation
import Testing

@Suite("Redaction of headers, query parameters and free text")
struct RedactionTests {
    static let sensitiveHeaders = ["Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "Proxy-Authorization", "X-Auth-Token", "authorization"]
    static let sensitiveParameters = ["token", "key", "password", "signature", "access_token", "api_key", "X-Amz-Signature", "client_secret"]

    @Test("every listed header is hidden; others are kept", arguments: sensitiveHeaders)
    func headers(name: String) {
        let redacted = Redaction().redact(headers: [name: "s3cr3t-value", "Accept": "application/json"])
        #expect(redacted[name] == "[REDACTED]")
        #expect(redacted["Accept"] == "application/json")
    }

    @Test("configured header names are hidden too")
    func configuredHeader() {
        var redaction = Redaction()
        redaction.headerNames.insert("x-session")
        #expect(redaction.redact(headers: ["X-Session": "abc"])["X-Session"] == "[REDACTED]")
        #expect(Redaction().redact(headers: ["X-Session": "abc"])["X-Session"] == "abc")
    }

    @Test("every listed query parameter is hidden in URLs and text; others are kept", arguments: sensitiveParameters)
    func parameters(name: String) throws {
        let url = try #require(URL(string: "https://api.example.com/apps?page=2&\(name)=s3cr3t-value&sort=name"))
        let shown = Redaction().redact(url: url)
        #expect(!shown.contains("s3cr3t-value"))
        #expect(shown.contains("\(name)=[REDACTED]"))
        #expect(shown.contains("page=2"))
        #expect(shown.contains("sort=name"))
        let text = Redaction().redactText("failed: \(url.absoluteString) (retrying)")
        #expect(text == "failed: https://api.example.com/apps?page=2&\(name)=[REDACTED]&sort=name (retrying)")
    }

    @Test("configured query parameters are hidden too")
    func configuredParameter() {
        var redaction = Redaction()
        redaction.queryParameterNames.insert("sig")
        #expect(redaction.redactText("/a?sig=abc&x=1") == "/a?sig=[REDACTED]&x=1")
        #expect(Redaction().redactText("/a?sig=abc&x=1") == "/a?sig=abc&x=1")
    }

    @Test("header lines, bearer credentials and URL user info in text are hidden", arguments: [
        ("Authorization: Bearer abc.def.ghi", "Authorization: [REDACTED]"),
        ("sent Cookie: session=1; theme=dark\nnext", "sent Cookie: [REDACTED]\nnext"),
        ("X-Api-Key: k-123, Accept: */*", "X-Api-Key: [REDACTED], Accept: */*"),
        ("token was Bearer abc.def", "token was Bearer [REDACTED]"),
        ("basic dXNlcjpwYXNz here", "basic [REDACTED] here"),
        ("https://me:pw@api.example.com/x", "https://[REDACTED]@api.example.com/x"),
        ("nothing to hide at 10:30 on http://host:8080/a?page=1", "nothing to hide at 10:30 on http://host:8080/a?page=1"),
        ("X-Auth-Token: t-1\napiKey: k-2", "X-Auth-Token: [REDACTED]\napiKey: [REDACTED]"),
        // A sensitive word inside a label is not a secret's label: decoding errors stay readable.
        ("DecodingError.keyNotFound: No value associated with key \"stability\"", "DecodingError.keyNotFound: No value associated with key \"stability\""),
    ])
    func text(input: String, expected: String) {
        #expect(Redaction().redactText(input) == expected)
    }

    @Test("a URLError naming a URL with a token reaches neither the event nor the log line")
    func urlErrorMessage() throws {
        let collector = LogCollector()
        let traces = TestTracer(configuration: .init(logging: collector.function()))
        let secretURL = "https://api.example.com/apps?token=abc123&page=2"
        let error = URLError(.timedOut, userInfo: ["NSErrorFailingURLStringKey" /* NSURLErrorFailingURLStringErrorKey, deprecated */: secretURL, "NSErrorFailingURLKey": URL(string: secretURL)!])
        #expect(String(describing: error).contains("abc123"))  // the raw message does hold it
        traces.tracer.recordError(error, userInfo: ["url": secretURL, "auth": "Authorization: Bearer zzz999", "api_key": "k-42"])
        let recorded = try #require(traces.errors.first)
        #expect(!recorded.message.contains("abc123"))
        #expect(recorded.userInfo["url"] == "https://api.example.com/apps?token=[REDACTED]&page=2")
        #expect(recorded.userInfo["auth"] == "Authorization: [REDACTED]")
        #expect(recorded.userInfo["api_key"] == "[REDACTED]")
        #expect(collector.records.allSatisfy { !$0.message.contains("abc123") })
    }

    @Test("trace-level request logs show headers and URL redacted", .timeLimit(.minutes(1)))
    func requestLogs() async throws {
        let collector = LogCollector()
        let traces = TestTracer(configuration: .init(logging: collector.function(minimumLevel: .trace)))
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
            let url = URL(string: base.absoluteString + "/apps/7?api_key=k-777&page=1")!
            var headers: [String: String] = [:]
            for name in Self.sensitiveHeaders { headers[name] = "secret-\(name)" }
            headers["Accept"] = "application/json"
            _ = try await backend.perform(BackendRequest(url: url, headers: headers))
        }
        let lines = collector.records
        #expect(lines.count == 2)  // headers at trace, the request at debug
        let all = lines.map { $0.message + " " + $0.metadata.description }.joined(separator: "\n")
        #expect(!all.contains("secret-"))
        #expect(!all.contains("k-777"))
        #expect(all.contains("application/json"))
        #expect(lines.last?.message.hasPrefix("GET /apps/{id} -> 200") == true)
        let request = try #require(traces.requests.first)
        #expect(request.route == "/apps/{id}")
    }

    @Test("routes given with a query string are cut at the query")
    func routeQuery() {
        let traces = TestTracer()
        traces.tracer.record(TraceEvent(.request(.init(method: "GET", route: "/search?password=x", status: 200, durationMs: 1))))
        #expect(traces.requests.first?.route == "/search")
    }

    @Test("the step rewrites only the fields that hold a secret and keeps every other field as it was")
    func onlyChangedFields() {
        let redaction = Redaction()
        // An error whose user info alone holds a secret: message, route and the clean key untouched.
        var error = TraceEvent(.error(.init(
            identity: "E", message: "sync failed", userInfo: ["authorization": "abc", "screen": "apps"],
            underlying: ["U"], route: "/apps", file: "F.swift", line: 7
        )))
        redaction.redact(&error)
        guard case .error(let redactedError) = error.payload else { Issue.record("not an error"); return }
        #expect(redactedError.message == "sync failed")
        #expect(redactedError.userInfo == ["authorization": "[REDACTED]", "screen": "apps"])
        #expect(redactedError.route == "/apps")
        #expect(redactedError.underlying == ["U"] && redactedError.file == "F.swift" && redactedError.line == 7)
        // An sse event whose route alone carries a query: reason and last event id untouched.
        var sse = TraceEvent(.sse(.init(phase: .reconnect, route: "/stream?token=t", attempt: 2, lastEventID: "41", reason: "idle")))
        redaction.redact(&sse)
        guard case .sse(let redactedSSE) = sse.payload else { Issue.record("not sse"); return }
        #expect(redactedSSE.route == "/stream")
        #expect(redactedSSE.reason == "idle" && redactedSSE.lastEventID == "41" && redactedSSE.attempt == 2)
        // A clean log line comes out equal to what went in.
        let log = TraceEvent(.log(.init(level: "info", message: "GET /apps -> 200", metadata: ["screen": "apps"])))
        var redactedLog = log
        redaction.redact(&redactedLog)
        #expect(redactedLog == log)
    }
}
