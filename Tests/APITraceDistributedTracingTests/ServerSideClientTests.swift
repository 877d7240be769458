import APITraceCapture
import APITraceDistributedTracing
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceTesting
import AsyncHTTPClient
import Foundation
import Instrumentation
import NIOCore
import OtecNewsServerSideClient
import Testing
import Tracing

@Suite("AsyncHTTPClient traced through RequestSpanTracer, end to end")
struct ServerSideClientTests {
    @Test("the sample AsyncHTTPClient client records route, status, host, duration and trace id per request")
    func sampleClient() async throws {
        let traces = TestTracer()
        try await withNewsServer { port in
            let client = ServerSideNewsClient(baseURL: "http://127.0.0.1:\(port)", recorder: traces.tracer)
            let papers = try await client.newspapers()
            let news = try await client.news(id: 42)
            try await client.shutdown()
            #expect(papers.count == 5)
            #expect(news.id == 42)
        }
        let requests = traces.events.compactMap { event in event.request.map { (event, $0) } }
        #expect(requests.map(\.1.route) == ["/newspapers", "/news/{id}"])
        for (event, request) in requests {
            #expect(request.method == "GET")
            #expect(request.status == 200)
            #expect(request.host == "127.0.0.1")
            #expect(request.error == nil)
            #expect(request.durationMs > 0 && request.durationMs < 60_000)
            #expect(isTraceID(event.traceID))
        }
        // Two requests outside any span: two traces.
        #expect(Set(requests.map(\.0.traceID)).count == 2)
    }

    @Test("inside a span, the request joins the caller's trace and the server receives that traceparent")
    func joinsCallerTrace() async throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        try await TestServer.run { base in
            var configuration = HTTPClient.Configuration()
            configuration.tracing.tracer = tracer
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let (parentTraceID, echoed) = try await tracer.withSpan("sync feed", ofKind: .internal) { span in
                let response = try await http.execute(HTTPClientRequest(url: base.absoluteString + "/headers"), timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 16)
                let headers = try JSONDecoder().decode([String: String].self, from: Data(body.readableBytesView))
                return (span.traceParent.traceID, headers["traceparent"] ?? headers["Traceparent"])
            }
            try await http.shutdown()
            let request = try #require(traces.requests.first)
            #expect(request.route == "/headers")
            #expect(traces.events.first?.traceID == parentTraceID)
            let sent = try #require(echoed.flatMap(TraceParent.init(headerValue:)))
            #expect(sent.traceID == parentTraceID)
        }
    }

    @Test("a refused connection is recorded with the client's error and no status")
    func refused() async throws {
        let traces = TestTracer()
        var configuration = HTTPClient.Configuration()
        configuration.tracing.tracer = RequestSpanTracer(recorder: traces.tracer)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        await #expect(throws: (any Error).self) {
            _ = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:9/a?token=abc"), timeout: .seconds(2))
        }
        try await http.shutdown()
        let request = try #require(traces.requests.first)
        #expect(request.status == nil)
        #expect(request.error != nil)
        #expect(request.route == "/a")
    }

    @Test("spans that are not HTTP client requests are not recorded")
    func nonHTTPSpans() {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        tracer.withSpan("load cache", ofKind: .internal) { _ in }
        tracer.withSpan("GET", ofKind: .server) { span in span.attributes["http.request.method"] = "GET" }
        tracer.withSpan("query", ofKind: .client) { span in span.attributes["db.system"] = "postgresql" }
        #expect(traces.events.isEmpty)
    }

    @Test("OpenTelemetry attributes map to the request's fields; url.full and url.query never appear")
    func attributes() throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        tracer.withSpan("POST /apps/{id}", ofKind: .client) { span in
            span.attributes["http.request.method"] = "POST"
            span.attributes["http.route"] = "/apps/{id}"
            span.attributes["url.full"] = "https://api.example.com/apps/42?token=s3cr3t"
            span.attributes["url.query"] = "token=s3cr3t"
            span.attributes["server.address"] = "api.example.com"
            span.attributes["http.response.status_code"] = 503
            span.attributes["http.request.body.size"] = 12
            span.attributes["http.response.body.size"] = 34
        }
        let event = try #require(traces.events.first)
        let request = try #require(event.request)
        #expect(request == TraceEvent.Request(
            method: "POST", route: "/apps/{id}", host: "api.example.com", status: 503, durationMs: request.durationMs,
            bytesIn: 34, bytesOut: 12
        ))
        #expect(!event.jsonLine.contains("s3cr3t"))
    }
}
