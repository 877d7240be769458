import APITraceCapture
import APITraceTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OtecNewsFutureClient
import Testing

@Suite("Jayme-style Future backend sample, traced")
struct FutureClientTests {
    @Test("every future-based request is recorded through the one lifecycle, with a traceparent sent")
    func futureBackend() async throws {
        let traces = TestTracer()
        try await withNewsServer { port in
            let base = URL(string: "http://127.0.0.1:\(port)")!
            let backend = TracingFutureBackend(URLSessionFutureBackend(), tracer: traces.tracer) { request in
                request.url?.path.hasPrefix("/news/") == true ? "/news/{id}" : nil
            }
            let repository = FutureNewsRepository(baseURL: base, backend: backend, tracer: traces.tracer)
            let news: FutureNewsRepository.News = try await withCheckedThrowingContinuation { continuation in
                repository.read(id: 7).start { continuation.resume(with: $0) }
            }
            #expect(news.id == 7)
            let refused = TracingFutureBackend(URLSessionFutureBackend(), tracer: traces.tracer)
            let result: Result<(Data, HTTPURLResponse), any Error> = await withCheckedContinuation { continuation in
                refused.future(for: URLRequest(url: URL(string: "http://127.0.0.1:9/news/8")!)).start { continuation.resume(returning: $0) }
            }
            #expect((try? result.get()) == nil)
        }
        let events = traces.events
        let requests = events.compactMap(\.request)
        #expect(requests.count == 2)
        #expect(requests.first?.route == "/news/{id}")
        #expect(requests.first?.status == 200)
        #expect(requests.first?.bytesIn ?? 0 > 0)
        #expect(requests.last?.route == "/news/{id}")
        #expect(requests.last?.status == nil)
        #expect(requests.last?.error == "URLError.cannotConnectToHost")
        #expect(events.allSatisfy { isTraceID($0.traceID) })
    }
}
