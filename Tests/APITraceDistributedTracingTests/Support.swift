import APITraceCapture
import Foundation
import Hummingbird
import Logging
import OtecNewsServer

/// Runs the sample news server on 127.0.0.1 for the duration of `body`.
func withNewsServer<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var quiet = Logger(label: "otec-news-server")
    quiet.logLevel = .critical
    let server = NewsServer().application(port: 0, logger: quiet) { port in continuation.yield(port) }
    let task = Task { try await server.run() }
    defer { task.cancel() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw URLError(.cannotConnectToHost) }
    return try await body(port)
}

/// A tracer writing to memory with its own log lines off, and what it recorded.
func memoryTracer(configuration: APITracer.Configuration = .init(logging: .disabled)) -> (APITracer, FlushedEvents) {
    let sink = InMemoryTraceSink()
    let recorder = APITracer(sinks: [sink], configuration: configuration)
    return (recorder, FlushedEvents(recorder: recorder, sink: sink))
}

/// What a tracer recorded, read after a flush: a span's event is built on the recorder's drain
/// thread, so reading the sink right after `end()` could miss it. The flush waits only for that
/// thread to build the events of spans ended so far.
struct FlushedEvents: Sendable {
    let recorder: APITracer
    let sink: InMemoryTraceSink

    /// Every event recorded so far, after a flush.
    var events: [TraceEvent] {
        recorder.flush()
        return sink.events
    }
}

extension TraceEvent {
    var request: TraceEvent.Request? { if case .request(let r) = payload { r } else { nil } }
}

func isTraceID(_ text: String?) -> Bool {
    guard let text else { return false }
    return text.count == 32 && text.allSatisfy(\.isHexDigit) && text != String(repeating: "0", count: 32)
}
