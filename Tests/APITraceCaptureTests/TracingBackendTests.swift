import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceFormat
import APITraceTesting
import Foundation
import Testing

@Suite("Tracing backend against a real server")
struct TracingBackendTests {
    @Test("a successful GET records every field of one request event")
    func successfulRequest() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
            let response = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps/42"), route: "/apps/{id}", attempt: 2))
            #expect(response.status == 200)
            let events = traces.events
            #expect(events.count == 1)
            let request = try #require(events.first?.request)
            #expect(request.method == "GET")
            #expect(request.route == "/apps/{id}")
            #expect(request.host == "127.0.0.1")
            #expect(request.status == 200)
            #expect(request.durationMs > 0)
            #expect(request.durationMs < 60_000)
            #expect(request.bytesIn == Int64(response.body.count))
            #expect(request.bytesIn == Int64(#"{"id":42,"name":"Otec","stability":0.9}"#.utf8.count))
            #expect(request.bytesOut == 0)
            #expect(request.error == nil)
            #expect(request.attempt == 2)
            #expect(request.sampleRate == nil)
            #expect(events.first?.traceID == nil)
        }
    }

    @Test("without a template the route is the path with ids replaced and no query")
    func normalizedRoute() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
            let url = URL(string: base.absoluteString + "/apps/12345?token=secret&page=2")!
            _ = try await backend.perform(BackendRequest(url: url))
            #expect(traces.requests.first?.route == "/apps/{id}")
        }
    }

    @Test("a POST records the bytes sent")
    func bytesOut() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
            let body = Data(repeating: 0x61, count: 1234)
            let response = try await backend.perform(BackendRequest(method: "POST", url: base.appendingPathComponent("echo"), route: "/echo", body: body))
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"received":1234}"#)
            let request = try #require(traces.requests.first)
            #expect(request.method == "POST")
            #expect(request.bytesOut == 1234)
            #expect(request.bytesIn == Int64(#"{"received":1234}"#.utf8.count))
        }
    }

    @Test("server errors are returned and recorded with their status", arguments: [("/fail", 500), ("/nothing/here", 404)])
    func serverErrors(path: String, status: Int) async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
            let response = try await backend.perform(BackendRequest(url: URL(string: base.absoluteString + path)!))
            #expect(response.status == status)
            let request = try #require(traces.requests.first)
            #expect(request.status == status)
            #expect(request.error == nil)
        }
    }

    @Test("a slow response past the timeout records URLError.timedOut and rethrows it")
    func timeout() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
            await #expect(throws: URLError.self) {
                _ = try await backend.perform(BackendRequest(url: base.appendingPathComponent("slow"), route: "/slow", timeout: 1.0))
            }
            let request = try #require(traces.requests.first)
            #expect(request.error == "URLError.timedOut")
            #expect(request.status == nil)
            #expect(request.bytesIn == nil)
            #expect(request.durationMs > 0)
        }
    }

    @Test("a refused connection records URLError.cannotConnectToHost")
    func refused() async throws {
        let traces = TestTracer()
        // Find a port nobody listens on: run a server, note its port, stop it.
        let base = try await TestServer.run { $0 }
        let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
        await #expect(throws: (any Error).self) {
            _ = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps"), timeout: 10))
        }
        #expect(traces.requests.first?.error == "URLError.cannotConnectToHost")
    }

    @Test("traceparent injection sends a W3C header and writes its trace id")
    func traceParent() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer, injectsTraceParent: true)
            let response = try await backend.perform(BackendRequest(url: base.appendingPathComponent("headers"), route: "/headers"))
            let headers = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
            let sent = try #require(headers?["traceparent"])
            let parent = try #require(TraceParent(headerValue: sent))
            #expect(parent.traceID.count == 32)
            #expect(parent.flags == 1)
            #expect(traces.events.first?.traceID == parent.traceID)

            // A caller's own traceparent is kept and its trace id recorded.
            let own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            let second = try await backend.perform(BackendRequest(url: base.appendingPathComponent("headers"), headers: ["traceparent": own]))
            let echoed = try JSONSerialization.jsonObject(with: second.body) as? [String: String]
            #expect(echoed?["traceparent"] == own)
            #expect(traces.events.last?.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        }
    }

    @Test("requests through a real file writer land in a readable trace file")
    func intoTraceFile() async throws {
        let folder = TemporaryDirectory()
        let directory = folder.path
        let writer = TraceFileWriter(configuration: .init(directory: directory))
        let tracer = APITracer(sinks: [writer], configuration: .init(logging: .disabled))
        try await TestServer.run { base in
            let backend = TracingBackend(URLSessionBackend(), tracer: tracer)
            for id in 1...3 { _ = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps/\(id)"))) }
            _ = try await backend.perform(BackendRequest(url: base.appendingPathComponent("fail")))
        }
        writer.close()
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".jsonl.gz") }
        #expect(files.count == 1)
        var requests: [TraceEvent.Request] = []
        let result = TraceFileReader(path: directory + "/" + files[0]).forEachEvent { event in
            if let request = event.request { requests.append(request) }
        }
        #expect(result.warnings.isEmpty)
        #expect(requests.map(\.route) == ["/apps/{id}", "/apps/{id}", "/apps/{id}", "/fail"])
        #expect(requests.map(\.status) == [200, 200, 200, 500])
    }
}
