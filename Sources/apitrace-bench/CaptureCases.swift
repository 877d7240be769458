import APITraceCapture
import APITraceDistributedTracing
import APITraceFormat
import APITraceWebSocket
import Foundation
import Logging
import Tracing

/// One measured case: per-call nanoseconds, median and 99th percentile.
struct CaptureResult: Sendable {
    var name: String
    var median: Int
    var p99: Int
}

/// A backend that answers at once, so only apitrace's own work is timed.
struct ImmediateBackend: HTTPBackend {
    let response = BackendResponse(status: 200, body: Data(repeating: 0x20, count: 512))
    func perform(_ request: BackendRequest) async throws -> BackendResponse { response }
}

/// The error the benchmark records: an enum case, as most apps' errors are.
enum SampleAppError: Error {
    case offline
}

/// The cases of `apitrace-bench capture`.
///
/// Every 2,000 calls the writer is flushed outside the timed region: the caller outruns the
/// background writer in a tight loop, and events dropped because the buffer is full would cost
/// less than real appends and flatter the figures. Span cases flush their `APITracer` instead,
/// which also drains the spans queued for its drain thread (none is dropped at the queue's bound).
struct CaptureCases: Sendable {
    let writer: TraceFileWriter
    let iterations: Int
    let only: String?

    func all() async -> [CaptureResult] {
        let quiet = APITracer.Configuration(logging: .disabled)
        let tracer = APITracer(sinks: [writer], configuration: quiet)
        var unlimited = quiet
        unlimited.errorRateLimit = nil
        let errorTracer = APITracer(sinks: [writer], configuration: unlimited)
        let url = URL(string: "https://api.example.com/apps/42?page=2")!
        let templated = BackendRequest(url: url, route: "/apps/{id}")
        let untemplated = BackendRequest(url: url)
        let bare = ImmediateBackend()
        let traced = TracingBackend(bare, tracer: tracer)
        let withParent = TracingBackend(bare, tracer: tracer, injectsTraceParent: true)
        // SwiftLogNoOpLogHandler's level is always `critical`: `info` stops at the level check,
        // `critical` reaches the (empty) handler.
        let noop = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }

        var results: [CaptureResult] = []
        results.append(await measureAsync("bare backend (baseline)") { _ = try? await bare.perform(templated) })
        results.append(await measureAsync("traced request, route template") { _ = try? await traced.perform(templated) })
        results.append(await measureAsync("traced request, route normalized from URL") { _ = try? await traced.perform(untemplated) })
        results.append(await measureAsync("traced request, template + traceparent") { _ = try? await withParent.perform(templated) })
        // What a WebSocket connection's task pays per `websocket` event (here a close with every
        // field): the record is queued; the tracer's drain thread runs the steps and the sink.
        let webSocketRoute = String(decoding: Array("/live/{id}".utf8), as: UTF8.self)
        results.append(measure("websocket close event (queued, built off the caller's thread)", flushing: tracer) {
            tracer.recordWebSocket(TraceEvent.WebSocket(
                phase: .close, route: webSocketRoute, attempt: 2, code: 1006, reason: "abnormal", closedBy: "network",
                durationMs: 61_000, messagesIn: 120, messagesOut: 4, bytesIn: 9_876, bytesOut: 321, pings: 2,
                pingRTTMs: 12.5, silenceMs: 10_400))
        })
        // What TracedURLSession adds around a task: the lifecycle from a URLRequest's URL and, where
        // the platform delivers metrics, the join with them (Linux delivers none: no join), no I/O.
        let lifecycleURL = url
        results.append(measure("URLSession wrapper lifecycle (start + metrics join + finish)") {
            let request = tracer.startRequest(method: "GET", url: lifecycleURL)
            if let join = TaskTimingJoin.forTask() {
                join.complete { request.finish(status: 200, bytesIn: 512, timing: $0) }
            } else {
                request.finish(status: 200, bytesIn: 512)
            }
        })
        // What AsyncHTTPClient does per request with a tracer configured: one client span with its attributes.
        let spanTracer = RequestSpanTracer(recorder: tracer)
        results.append(measure("distributed-tracing span -> request (as AsyncHTTPClient)", flushing: tracer) {
            spanTracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["server.address"] = "api.example.com"
                span.attributes["url.path"] = "/apps/42"
                span.attributes["http.status_code"] = SpanAttribute.int64(200)
            }
        })
        results.append(measure("distributed-tracing span, NoOpTracer (baseline)") {
            NoOpTracer().withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["server.address"] = "api.example.com"
                span.attributes["url.path"] = "/apps/42"
                span.attributes["http.status_code"] = SpanAttribute.int64(200)
            }
        })
        // The same span through a tracer that forwards every span (here one that keeps nothing).
        let forwardingSpanTracer = RequestSpanTracer(recorder: tracer, forwardingTo: NoOpTracer())
        results.append(measure("distributed-tracing span -> request, forwarding (NoOpTracer)", flushing: tracer) {
            forwardingSpanTracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["server.address"] = "api.example.com"
                span.attributes["url.path"] = "/apps/42"
                span.attributes["http.status_code"] = SpanAttribute.int64(200)
            }
        })
        // Exactly what AsyncHTTPClient does per request, through the existentials it holds.
        let request = AsyncHTTPClientRequestSpan()
        let anySpanTracer: any Tracing.Tracer = spanTracer
        let anyNoOpTracer: any Tracing.Tracer = NoOpTracer()
        results.append(measure("AsyncHTTPClient span calls -> request", flushing: tracer) { request.run(anySpanTracer) })
        results.append(measure("AsyncHTTPClient span calls, NoOpTracer (baseline)") { request.run(anyNoOpTracer) })
        // The same calls 100 µs apart, as requests over a network come: the tracer's drain queue
        // goes idle between spans, so every span pays for waking it.
        results.append(measure("sparse: AsyncHTTPClient span calls -> request, 100 µs apart", flushing: tracer, apart: .microseconds(100)) {
            request.run(anySpanTracer)
        })
        results.append(measure("sparse: AsyncHTTPClient span calls, NoOpTracer, 100 µs apart", apart: .microseconds(100)) {
            request.run(anyNoOpTracer)
        })
        results.append(measure("recordError, unlimited (every event written)") { errorTracer.recordError(SampleAppError.offline) })
        results.append(measure("recordError, default limit (10/min: suppressed)") { tracer.recordError(SampleAppError.offline) })
        results.append(measure("swift-log info, no-op handler (level check only)") { noop.info("GET /apps/{id} -> 200") })
        results.append(measure("swift-log critical, no-op handler (handler called)") { noop.critical("GET /apps/{id} -> 200") })
        return results
    }

    /// Times `body`. With `recorder`, that tracer is flushed instead of the writer: it first builds
    /// the events of the spans ended so far (on its drain queue), so no span is counted as dropped.
    /// With `apart`, calls start that long after each other (the wait spins, untimed) and at most
    /// 20,000 are timed.
    private func measure(
        _ name: String, flushing recorder: APITracer? = nil, apart: Duration? = nil, _ body: () -> Void
    ) -> CaptureResult {
        if let only, !name.contains(only) { return CaptureResult(name: name + " (skipped)", median: 0, p99: 0) }
        let flush = { if let recorder { recorder.flush() } else { writer.flush() } }
        let spacing = apart.map { UInt64($0.components.seconds) * 1_000_000_000 + UInt64($0.components.attoseconds / 1_000_000_000) }
        let iterations = spacing == nil ? self.iterations : min(self.iterations, 20_000)
        for i in 0..<min(10_000, iterations) {
            if i % 2000 == 0 { flush() }
            body()
        }
        flush()
        var samples = [Int](repeating: 0, count: iterations)
        for i in 0..<iterations {
            if i % 2000 == 0 { flush() }
            let start = DispatchTime.now().uptimeNanoseconds
            body()
            let end = DispatchTime.now().uptimeNanoseconds
            samples[i] = Int(end - start)
            if let spacing { while DispatchTime.now().uptimeNanoseconds < start + spacing {} }
        }
        return summarize(name, &samples)
    }

    private func measureAsync(_ name: String, _ body: () async -> Void) async -> CaptureResult {
        if let only, !name.contains(only) { return CaptureResult(name: name + " (skipped)", median: 0, p99: 0) }
        for _ in 0..<min(10_000, iterations) { await body() }
        writer.flush()
        var samples = [Int](repeating: 0, count: iterations)
        for i in 0..<iterations {
            if i % 2000 == 0 { writer.flush() }
            let start = DispatchTime.now().uptimeNanoseconds
            await body()
            samples[i] = Int(DispatchTime.now().uptimeNanoseconds - start)
        }
        return summarize(name, &samples)
    }

    private func summarize(_ name: String, _ samples: inout [Int]) -> CaptureResult {
        samples.sort()
        return CaptureResult(name: name, median: samples[samples.count / 2], p99: samples[samples.count * 99 / 100])
    }
}

/// The span calls AsyncHTTPClient 1.37 makes per request (`RequestBag+Tracing.swift`,
/// `TracingSupport.swift`): a client span started through `any Tracer` with no `withSpan`, the
/// request attributes (absent ones written as `nil`), the response status, then `end()`. The URL
/// parts are made at run time once (not literals), as AsyncHTTPClient's come from the parsed URL.
struct AsyncHTTPClientRequestSpan: Sendable {
    let scheme = "https"
    let host = String(decoding: Array("api.example.com".utf8), as: UTF8.self)
    let path = String(decoding: Array("/apps/42".utf8), as: UTF8.self)
    let fullURL = String(decoding: Array("https://api.example.com/apps/42?page=2".utf8), as: UTF8.self)
    let query = "page=2"

    func run(_ tracer: any Tracing.Tracer) {
        let span: any Tracing.Span = tracer.startSpan("GET", ofKind: .client)
        span.attributes["http.request.method"] = "GET"
        span.attributes["url.scheme"] = scheme
        span.attributes["server.address"] = host
        span.attributes["server.port"] = 443
        span.attributes["http.request.body.size"] = nil as Int?
        span.attributes["url.path"] = path
        span.attributes["url.full"] = fullURL
        span.attributes["url.query"] = query
        span.attributes["http.response.status_code"] = SpanAttribute.int64(200)
        span.end()
    }
}
