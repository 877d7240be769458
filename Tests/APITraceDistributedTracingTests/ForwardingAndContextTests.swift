import APITraceCapture
import APITraceDistributedTracing
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceTesting
import Foundation
import InMemoryTracing
import Instrumentation
import Testing
import Tracing

@Suite("RequestSpanTracer: forwarding and the caller's context")
struct ForwardingAndContextTests {
    @Test("every span, HTTP or not, also reaches the forwarded tracer with its attributes and errors")
    func forwarding() throws {
        let traces = TestTracer()
        let inMemory = InMemoryTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer, forwardingTo: inMemory)
        tracer.withSpan("sync", ofKind: .internal) { _ in
            tracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["url.path"] = "/apps/42"
                span.attributes["http.status_code"] = SpanAttribute.int64(503)
            }
        }
        struct Refused: Error {}
        _ = try? tracer.withSpan("POST", ofKind: .client) { span in
            span.attributes["http.request.method"] = "POST"
            span.attributes["http.route"] = "/apps"
            throw Refused()
        }
        let finished = inMemory.finishedSpans
        #expect(finished.map(\.operationName) == ["GET", "sync", "POST"])
        #expect(finished.first?.attributes.get("url.path") == .string("/apps/42"))
        #expect(finished.last?.errors.count == 1)
        let requests = traces.requests
        #expect(requests.map(\.route) == ["/apps/{id}", "/apps"])
        #expect(requests.map(\.status) == [503, nil])
        // A type declared inside a function: no per-run address in its identity.
        #expect(requests.last?.error == "ForwardingAndContextTests.Refused")
    }

    @Test("forceFlush records the ended spans' events and flushes the forwarded tracer too")
    func forceFlushForwards() {
        let traces = TestTracer()
        let inMemory = InMemoryTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer, forwardingTo: inMemory)
        tracer.withSpan("GET", ofKind: .client) { span in
            span.attributes["http.request.method"] = "GET"
            span.attributes["url.path"] = "/apps"
        }
        #expect(inMemory.numberOfForceFlushes == 0)
        tracer.forceFlush()
        #expect(inMemory.numberOfForceFlushes == 1)
        // Drained by forceFlush alone: the sink is read without the recorder's flush.
        #expect(traces.sink.events.requests.map(\.route) == ["/apps"])
    }

    @Test("TraceContextProvider.serviceContext: a backend request inside a span joins the span's trace")
    func serviceContextProvider() async throws {
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.traceContext = .serviceContext
        let traces = TestTracer(configuration: configuration)
        let recorder = traces.tracer
        let spans = RequestSpanTracer(recorder: recorder)
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: recorder, injectsTraceParent: true)
            let spanTraceID = try await spans.withSpan("refresh", ofKind: .internal) { span in
                _ = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps/1"), route: "/apps/{id}"))
                return span.traceParent.traceID
            }
            _ = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps/2"), route: "/apps/{id}"))
            let ids = traces.sink.events.map(\.traceID)
            #expect(ids.first == spanTraceID)
            #expect(ids.last != spanTraceID)
            #expect(isTraceID(ids.last ?? nil))
        }
    }
}
