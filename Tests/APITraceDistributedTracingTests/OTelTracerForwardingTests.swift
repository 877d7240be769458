import APITraceCapture
import APITraceDistributedTracing
import APITraceTestSupport
import APITraceServerTestSupport
import APITraceTesting
import AsyncHTTPClient
import Foundation
import Instrumentation
import NIOCore
import Testing
import Tracing

/// A server-side Swift service that already runs an OpenTelemetry tracer puts `RequestSpanTracer`
/// in front of it (`forwardingTo:`): its own spans and apitrace's events then form one trace.
///
/// Test double: `W3CRecordingTracer` stands in for swift-otel's `OTelTracer` (whose first build
/// takes about 7 minutes here): like it, it makes W3C ids, propagates them as `traceparent` and
/// keeps its ended spans. swift-distributed-tracing's `InMemoryTracer` cannot stand in: it
/// propagates ids under headers of its own, not `traceparent`.
@Suite("RequestSpanTracer in front of an OpenTelemetry tracer")
struct OTelTracerForwardingTests {
    @Test("incoming traceparent, server span, AsyncHTTPClient call: one trace; the request event's trace_id and span_id are the OTel client span's, which the server received")
    func oneTrace() async throws {
        let traces = TestTracer()
        let otel = W3CRecordingTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer, forwardingTo: otel)
        let upstreamTrace = "4bf92f3577b34da6a3ce929d0e0e4736", upstreamSpan = "00f067aa0ba902b7"
        try await TestServer.run { base in
            var configuration = HTTPClient.Configuration()
            configuration.tracing.tracer = tracer
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            var incoming = ServiceContext.topLevel
            tracer.extract(["traceparent": "00-\(upstreamTrace)-\(upstreamSpan)-01"], into: &incoming, using: DictionaryHeaders())
            let echoed = try await tracer.withSpan("GET /feed", context: incoming, ofKind: .server) { _ in
                let response = try await http.execute(HTTPClientRequest(url: base.absoluteString + "/headers"), timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 16)
                let headers = try JSONDecoder().decode([String: String].self, from: Data(body.readableBytesView))
                return headers["traceparent"] ?? headers["Traceparent"]
            }
            try await http.shutdown()
            tracer.forceFlush()
            let spans = otel.finished
            let server = try #require(spans.first { $0.kind == .server })
            let client = try #require(spans.first { $0.kind == .client })
            // Their spans: the server span continues the upstream trace, the client span is its child.
            #expect(server.traceID == upstreamTrace && server.parentID == upstreamSpan)
            #expect(client.traceID == upstreamTrace && client.parentID == server.spanID)
            // The server got the OTel client span's ids.
            #expect(echoed == "00-\(upstreamTrace)-\(client.spanID)-01")
            // apitrace's event: the same trace, the same span (a decode failure recorded for it links there too).
            let event = try #require(traces.events.first { $0.request != nil })
            #expect(event.traceID == upstreamTrace)
            #expect(event.spanID == client.spanID)
            #expect(event.request?.route == "/headers")
            #expect(event.request?.port == base.port)
        }
    }
}

private struct DictionaryHeaders: Extractor, Injector {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}

/// W3C ids kept in a context by ``W3CRecordingTracer``.
private enum W3CKey: ServiceContextKey {
    typealias Value = W3CRecordingTracer.IDs
}

/// A minimal OpenTelemetry-like tracer (see the suite's note): W3C ids, `traceparent` in and out, ended spans kept.
final class W3CRecordingTracer: Tracer, @unchecked Sendable {
    struct IDs: Sendable { var traceID, spanID: String }
    struct Ended: Sendable { var name: String; var kind: SpanKind; var traceID, spanID: String; var parentID: String? }

    private let lock = NSLock()
    private var ended: [Ended] = []
    var finished: [Ended] { lock.withLock { ended } }

    static func hex(_ bytes: Int) -> String { (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }

    final class Span: Tracing.Span, @unchecked Sendable {
        let tracer: W3CRecordingTracer
        let kind: SpanKind
        let ids: W3CRecordingTracer.IDs
        let parentID: String?
        let context: ServiceContext
        private let lock = NSLock()
        private var name: String
        private var attrs: SpanAttributes = [:]

        init(tracer: W3CRecordingTracer, name: String, kind: SpanKind, ids: W3CRecordingTracer.IDs, parentID: String?, base: ServiceContext) {
            self.tracer = tracer
            self.kind = kind
            self.ids = ids
            self.parentID = parentID
            self.name = name
            var context = base
            context[W3CKey.self] = ids
            self.context = context
        }

        var operationName: String {
            get { lock.withLock { name } }
            set { lock.withLock { name = newValue } }
        }
        var attributes: SpanAttributes {
            get { lock.withLock { attrs } }
            set { lock.withLock { attrs = newValue } }
        }
        var isRecording: Bool { true }
        func setStatus(_ status: SpanStatus) {}
        func addEvent(_ event: SpanEvent) {}
        func addLink(_ link: SpanLink) {}
        func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
            let done = Ended(name: operationName, kind: kind, traceID: ids.traceID, spanID: ids.spanID, parentID: parentID)
            tracer.lock.withLock { tracer.ended.append(done) }
        }
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> Span {
        let base = context()
        let parent = base[W3CKey.self]
        let ids = IDs(traceID: parent?.traceID ?? Self.hex(16), spanID: Self.hex(8))
        return Span(tracer: self, name: operationName, kind: kind, ids: ids, parentID: parent?.spanID, base: base)
    }

    func forceFlush() {}

    func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {
        guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = value.split(separator: "-").map(String.init)
        guard parts.count == 4, parts[1].count == 32, parts[2].count == 16 else { return }
        context[W3CKey.self] = IDs(traceID: parts[1], spanID: parts[2])
    }

    func inject<Carrier, Inject>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {
        guard let ids = context[W3CKey.self] else { return }
        injector.inject("00-\(ids.traceID)-\(ids.spanID)-01", forKey: "traceparent", into: &carrier)
    }
}
