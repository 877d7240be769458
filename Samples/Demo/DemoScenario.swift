import APITraceCapture
import Foundation
import Hummingbird
import Logging
import OtecNewsClient
import OtecNewsServer

/// The demo's whole loop: the sample server with faults, the instrumented sample client against
/// it, and the trace files they leave behind.
struct DemoScenario {
    /// How long the client browses.
    var duration: Duration
    /// Where the traces go.
    var traceDirectory: String

    /// The faults the server injects, scaled to the run's length: a background of errors, slow
    /// responses, apps without `stability`, SSE drops, and an error spike in the middle.
    var faults: NewsServerFaults {
        let seconds = Double(duration.components.seconds)
        return NewsServerFaults(
            serverErrorRate: 0.03, slowRate: 0.05, slowDelay: .milliseconds(400), missingStabilityRate: 0.1,
            sseDropAfter: 12,
            spike: .milliseconds(Int64(seconds * 400)) ..< .milliseconds(Int64(seconds * 700)), spikeErrorRate: 0.7,
            commentsDropAfter: 8, commentsErrorAfter: 14, commentsPongDelay: .milliseconds(300))
    }

    /// Runs server and client, then closes the trace files. Returns what the client saw.
    func run() async throws -> SampleClientRun.Outcome {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var quiet = Logger(label: "otec-news-server")
        quiet.logLevel = .critical
        let server = NewsServer(faults: faults, sseInterval: .milliseconds(100)).application(port: 0, logger: quiet) { port in
            portContinuation.yield(port)
        }
        let serverTask = Task { try await server.run() }
        var ports = portStream.makeAsyncIterator()
        guard let port = await ports.next() else { throw DemoError("the sample server did not start") }

        let comments = try await NewsCommentsServer(faults: faults, interval: .milliseconds(100)).start()
        let writer = TraceFileWriter(configuration: .init(directory: traceDirectory, app: "OtecDemo", appVersion: "1.0.0"))
        let tracer = APITracer(sinks: [writer], configuration: .init(logging: .disabled, session: "demo-\(UUID().uuidString.prefix(8))"))
        let outcome = await SampleClientRun(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, commentsURL: URL(string: "ws://127.0.0.1:\(comments.port)")!, tracer: tracer
        ).run(for: duration)
        tracer.flush()
        writer.close()
        await comments.stop()
        serverTask.cancel()
        _ = await serverTask.result
        return outcome
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
