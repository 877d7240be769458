import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("URLSession calls traced through TracedURLSession, against a real server")
struct TracedURLSessionTests {
    @Test("async data(for:) records route, status, host and the bytes received")
    func asyncData() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let session = TracedURLSession(tracer: traces.tracer)
            let (data, response) = try await session.data(for: URLRequest(url: base.appendingPathComponent("apps/42")))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let request = try #require(traces.requests.first)
            #expect(traces.events.count == 1)
            #expect(request.route == "/apps/{id}")
            #expect(request.host == "127.0.0.1")
            #expect(request.status == 200)
            #expect(request.bytesIn == Int64(data.count))
            #expect(request.durationMs > 0)
        }
    }

    @Test("a completion-handler data task is recorded before the handler runs")
    func completionHandler() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let session = TracedURLSession(tracer: traces.tracer) { request in request.url?.path == "/fail" ? "/fail" : nil }
            let seenInHandler: Int = await withCheckedContinuation { continuation in
                session.dataTask(with: base.appendingPathComponent("fail")) { _, _, _ in
                    continuation.resume(returning: traces.events.count)
                }.resume()
            }
            #expect(seenInHandler == 1)
            let request = try #require(traces.requests.first)
            #expect(request.route == "/fail")
            #expect(request.status == 500)
        }
    }

    @Test("upload and download record bytes out and in")
    func uploadAndDownload() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let session = TracedURLSession(tracer: traces.tracer)
            var post = URLRequest(url: base.appendingPathComponent("echo"))
            post.httpMethod = "POST"
            let (echo, _) = try await session.upload(for: post, from: Data(repeating: 1, count: 321))
            #expect(String(decoding: echo, as: UTF8.self) == #"{"received":321}"#)
            let (file, _) = try await session.download(for: URLRequest(url: base.appendingPathComponent("apps")))
            defer { try? FileManager.default.removeItem(at: file) }
            let downloaded = try Data(contentsOf: file)
            #expect(String(decoding: downloaded, as: UTF8.self) == TestServer.appsJSON)
            let requests = traces.requests
            #expect(requests.map(\.method) == ["POST", "GET"])
            #expect(requests.first?.bytesOut == 321)
            #expect(requests.last?.bytesIn == Int64(downloaded.count))
        }
    }

    @Test("a cancelled Swift task is CancellationError; a cancelled URLSession task is URLError.cancelled")
    func cancellation() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let session = TracedURLSession(tracer: traces.tracer)
            let call = Task { try await session.data(for: URLRequest(url: base.appendingPathComponent("slow"))) }
            try await Task.sleep(for: .milliseconds(300))
            call.cancel()
            await #expect(throws: CancellationError.self) { _ = try await call.value }

            let task = session.dataTask(with: base.appendingPathComponent("slow")) { _, _, _ in }
            task.resume()
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            for _ in 0..<100 where traces.events.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(traces.requests.map(\.error) == ["CancellationError", "URLError.cancelled"])
    }

    @Test("a refused connection is a transport error with no status, query never in the event")
    func refused() async throws {
        let traces = TestTracer()
        let session = TracedURLSession(tracer: traces.tracer)
        await #expect(throws: URLError.self) {
            _ = try await session.data(from: URL(string: "http://127.0.0.1:9/a?token=s3cr3t")!)
        }
        let event = try #require(traces.events.first)
        #expect(event.request?.status == nil)
        #expect(event.request?.error == "URLError.cannotConnectToHost")
        #expect(!event.jsonLine.contains("s3cr3t"))
    }
}
