import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import Foundation
import Synchronization
import Testing

@Suite("A failing sink never reaches the caller")
struct SinkFailureTests {
    @Test("a file writer that cannot create its folder drops and counts, while requests, errors and flushes go on")
    func unwritableDirectory() async throws {
        let folder = TemporaryDirectory()
        let parent = folder.path
        // A folder inside a regular file cannot be created, even by root.
        let blocker = parent + "/not-a-folder"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let diagnostics = Mutex<[String]>([])
        let writer = TraceFileWriter(configuration: .init(
            directory: blocker + "/traces", flushInterval: .milliseconds(20),
            diagnostics: { message in diagnostics.withLock { $0.append(message) } }
        ))
        let memory = InMemoryTraceSink()
        let tracer = APITracer(sinks: [writer, memory], configuration: .init(errorRateLimit: nil, logging: .disabled))
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: tracer)
            for id in 1...5 {
                let response = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps/\(id)")))
                #expect(response.status == 200)
            }
        }
        for _ in 0..<20 { tracer.recordError(NewsError.offline) }
        tracer.flush()
        writer.close()
        #expect(memory.events.count == 25)  // the other sink got everything
        let stats = writer.statistics
        #expect(stats.appended == 25)
        #expect(stats.written == 0)
        #expect(stats.droppedWriteFailed == 25)
        #expect(diagnostics.withLock { $0.contains { $0.contains("cannot create a trace file") } })
    }
}
