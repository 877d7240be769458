import APITraceCapture
import APITraceDistributedTracing
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceTesting
import AsyncHTTPClient
import Foundation
import InMemoryTracing
import Instrumentation
import NIOCore
import Testing
import Tracing

@Suite("RequestSpan: attributes, threads and W3C ids")
struct RequestSpanTests {
    @Test("a span written from several tasks and ended from several threads at once records one request with every field")
    func endedOnOtherThreads() async throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        let span = tracer.startSpan("GET", ofKind: .client)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { span.attributes["http.request.method"] = "GET" }
            group.addTask { span.attributes["url.path"] = "/apps/42" }
            group.addTask { span.attributes["server.address"] = "api.example.com" }
            group.addTask { span.attributes["http.response.status_code"] = 204 }
            group.addTask { span.attributes["http.response.body.size"] = 0 }
        }
        // Off the cooperative pool: AsyncHTTPClient ends spans on its event loop threads.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                DispatchQueue.concurrentPerform(iterations: 4) { _ in span.end() }
                done.resume()
            }
        }
        #expect(!span.isRecording)
        let requests = traces.requests
        #expect(requests.count == 1)
        let request = try #require(requests.first)
        #expect(request == TraceEvent.Request(
            method: "GET", route: "/apps/{id}", host: "api.example.com", status: 204, durationMs: request.durationMs, bytesIn: 0
        ))
    }

    @Test("attributes set later override earlier ones, a removed one is gone, and a lower-case method is upper-cased")
    func laterWritesOverride() throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        tracer.withSpan("get", ofKind: .client) { span in
            span.attributes["http.request.method"] = "get"
            span.attributes["url.path"] = "/apps/1"
            span.attributes["http.response.status_code"] = 500
            span.attributes["server.address"] = "old.example.com"
            span.attributes["http.request.body.size"] = 99
            // What a retry or a redirect does to the same span.
            span.attributes["url.path"] = "/groups/7/apps"
            span.attributes["http.response.status_code"] = SpanAttribute.int64(200)
            span.attributes["server.address"] = "api.example.com"
            span.attributes["http.request.body.size"] = nil
        }
        let request = try #require(traces.requests.first)
        #expect(request.method == "GET")
        #expect(request.route == "/groups/{id}/apps")
        #expect(request.status == 200)
        #expect(request.host == "api.example.com")
        #expect(request.bytesOut == nil)
    }

    @Test("attributes no request needs reach the forwarded span and read back; replacing the whole set replaces the fields")
    func unknownAttributesForwarded() throws {
        let traces = TestTracer()
        let inMemory = InMemoryTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer, forwardingTo: inMemory)
        tracer.withSpan("POST", ofKind: .client) { span in
            span.attributes["http.request.method"] = "POST"
            span.attributes["url.path"] = "/apps"
            span.attributes["db.system"] = "none"
            span.attributes["network.protocol.version"] = "1.1"
            span.attributes["http.response.status_code"] = 201
            #expect(span.attributes.get("db.system") == .string("none"))
            #expect(span.attributes.get("url.path") == .string("/apps"))
        }
        tracer.withSpan("PUT", ofKind: .client) { span in
            span.attributes["http.request.method"] = "PUT"
            span.attributes["url.path"] = "/apps/1"
            span.attributes = ["http.request.method": "DELETE", "http.route": "/apps/{id}", "http.response.status_code": 204]
        }
        let finished = inMemory.finishedSpans
        #expect(finished.count == 2)
        #expect(finished.first?.attributes.get("db.system") == .string("none"))
        #expect(finished.first?.attributes.get("network.protocol.version") == .string("1.1"))
        #expect(finished.last?.attributes.get("url.path") == nil)
        let requests = traces.requests
        #expect(requests.map(\.method) == ["POST", "DELETE"])
        #expect(requests.map(\.route) == ["/apps", "/apps/{id}"])
        #expect(requests.map(\.status) == [201, 204])
    }

    @Test(
        "ids taken from an incoming traceparent come back as the same text: trace id, flags, and a new 16-digit span id",
        arguments: [
            // Leading zeros in both halves, every hex digit, flags off.
            "00-00000000000000010123456789abcdef-0fedcba987654321-00",
            // Upper case on the wire is written in lower case (W3C Trace Context, section 3.2.2.3).
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "00-ffffffffffffffffffffffffffffffff-0000000000000001-01",
        ]
    )
    func idsRoundTrip(header: String) throws {
        // Parsed here by hand, not with apitrace's parser.
        let parts = header.lowercased().split(separator: "-").map(String.init)
        let (traceID, parentID, flags) = (parts[1], parts[2], parts[3])
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        var incoming = ServiceContext.topLevel
        tracer.extract(["traceparent": header], into: &incoming, using: HeaderExtractor())
        var sent: [String: String] = [:]
        tracer.withSpan("GET", context: incoming, ofKind: .client) { span in
            span.attributes["http.request.method"] = "GET"
            span.attributes["url.path"] = "/apps"
            span.attributes["http.response.status_code"] = 200
            tracer.inject(span.context, into: &sent, using: HeaderInjector())
            #expect(span.traceParent.traceID == traceID)
            #expect(span.traceParent.parentID != parentID)
        }
        let event = try #require(traces.events.first)
        #expect(event.traceID == traceID)
        let out = try #require(sent["traceparent"]).split(separator: "-").map(String.init)
        #expect(out.count == 4)
        #expect(out[0] == "00")
        #expect(out[1] == traceID)
        #expect(out[2].count == 16 && out[2].allSatisfy { "0123456789abcdef".contains($0) })
        #expect(out[2] != parentID)
        #expect(out[3] == flags)
    }

    @Test("the trace id of an AsyncHTTPClient request is the one in the traceparent the server received")
    func eventMatchesSentHeader() async throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        try await TestServer.run { base in
            var configuration = HTTPClient.Configuration()
            configuration.tracing.tracer = tracer
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            var echoed: [String] = []
            for _ in 0..<3 {
                let header = try await tracer.withSpan("sync", ofKind: .internal) { _ in
                    let response = try await http.execute(HTTPClientRequest(url: base.absoluteString + "/headers"), timeout: .seconds(60))
                    let body = try await response.body.collect(upTo: 1 << 16)
                    let headers = try JSONDecoder().decode([String: String].self, from: Data(body.readableBytesView))
                    return headers["traceparent"] ?? headers["Traceparent"]
                }
                echoed.append(try #require(header))
            }
            try await http.shutdown()
            // The trace id the server saw, cut out of the header by hand.
            let sentTraceIDs = echoed.map { String($0.split(separator: "-")[1]) }
            #expect(traces.events.map(\.traceID) == sentTraceIDs)
            #expect(Set(sentTraceIDs).count == 3)
        }
    }
}

/// Writes header values into a dictionary, as an HTTP client would.
private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

/// Reads header values from a dictionary, as an HTTP server would.
private struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
