import APITraceCapture
import APITraceTesting
import Foundation
import Testing

enum NewsError: Error {
    case offline
    case badStatus(Int)
    case invalid(reason: String, code: Int)
}

/// An enum whose description would hide its case name.
enum DescribedError: Error, CustomStringConvertible {
    case quotaExceeded
    var description: String { "You are over quota" }
}

struct ValidationFailure: Error {
    var field: String
}

struct SyncError: TraceableError {
    var cause: any Error
    var underlyingErrors: [any Error] { [cause] }
}

struct CustomIdentityError: TraceableError {
    var traceIdentity: String { "Checkout.paymentDeclined" }
}

@Suite("recordError")
struct RecordErrorTests {
    @Test("identities are stable: enum cases without values, domain#code, URL error names, types", arguments: [
        (NewsError.offline as any Error, "NewsError.offline"),
        (NewsError.badStatus(503), "NewsError.badStatus"),
        (NewsError.invalid(reason: "x", code: 1), "NewsError.invalid"),
        (DescribedError.quotaExceeded, "DescribedError.quotaExceeded"),
        (NSError(domain: "com.example.sync", code: 42), "com.example.sync#42"),
        (URLError(.timedOut), "URLError.timedOut"),
        (URLError(.notConnectedToInternet), "URLError.notConnectedToInternet"),
        (NSError(domain: NSURLErrorDomain, code: -1004), "URLError.cannotConnectToHost"),
        (CocoaError(.fileNoSuchFile), "NSCocoaErrorDomain#4"),
        (ValidationFailure(field: "email"), "ValidationFailure"),
        (CustomIdentityError(), "Checkout.paymentDeclined"),
        (DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "bad")), "DecodingError.dataCorrupted"),
    ] as [(any Error, String)])
    func identities(error: any Error, identity: String) {
        #expect(ErrorIdentity.of(error) == identity)
    }

    @Test("one call writes identity, message, user info as strings, route, file and line")
    func fields() throws {
        let traces = TestTracer()
        let line = #line + 1
        traces.tracer.recordError(NewsError.badStatus(503), userInfo: ["screen": "news", "retries": 3, "ratio": 0.5], route: "/news")
        let error = try #require(traces.errors.first)
        #expect(error.identity == "NewsError.badStatus")
        #expect(error.message == "badStatus(503)")
        #expect(error.userInfo == ["screen": "news", "retries": "3", "ratio": "0.5"])
        #expect(error.route == "/news")
        #expect(error.file == "APITraceCaptureTests/RecordErrorTests.swift")
        #expect(error.line == line)
        #expect(error.underlying.isEmpty)
        #expect(error.suppressed == nil)
    }

    @Test("the underlying chain follows TraceableError and NSUnderlyingErrorKey")
    func underlyingChain() throws {
        let traces = TestTracer()
        let posix = NSError(domain: NSPOSIXErrorDomain, code: 61)
        let url = NSError(domain: NSURLErrorDomain, code: -1004, userInfo: [NSUnderlyingErrorKey: posix])
        traces.tracer.recordError(SyncError(cause: url))
        let error = try #require(traces.errors.first)
        #expect(error.identity == "SyncError")
        #expect(error.underlying == ["URLError.cannotConnectToHost", "NSPOSIXErrorDomain#61"])
    }

    @Test("the global function records with APITracer.shared")
    func globalFunction() throws {
        let traces = TestTracer()
        let previous = APITracer.shared
        APITracer.bootstrap(traces.tracer)
        defer { APITracer.bootstrap(previous) }
        recordError(NewsError.offline, userInfo: ["k": "v"])
        #expect(traces.errors.first?.identity == "NewsError.offline")
    }

    @Test("a recorded error is logged once through the logging function, redacted")
    func logged() throws {
        let collector = LogCollector()
        let tracer = TestTracer(configuration: .init(logging: collector.function())).tracer
        tracer.recordError(URLError(.timedOut, userInfo: ["NSErrorFailingURLStringKey" /* NSURLErrorFailingURLStringErrorKey, deprecated */: "https://api.example.com/a?token=abc123"]))
        let lines = collector.records
        #expect(lines.count == 1)
        #expect(lines.first?.level == .error)
        #expect(lines.first?.message.contains("URLError.timedOut") == true)
        #expect(lines.first?.message.contains("abc123") == false)
    }
}
