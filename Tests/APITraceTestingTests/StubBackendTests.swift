import APITraceCapture
import APITraceTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("Stub backend")
struct StubBackendTests {
    private let url = URL(string: "https://api.example.com/apps/42?page=2")!

    @Test("status and json answer every request and keep the requests sent")
    func presets() async throws {
        let stub = StubBackend.json(#"{"ok": true}"#, status: 201)
        let response = try await stub.perform(BackendRequest(method: "POST", url: url, body: Data("x".utf8)))
        #expect(response.status == 201)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok": true}"#)
        let copy = stub   // copies share what they received
        _ = try await copy.perform(BackendRequest(url: url))
        #expect(stub.requests.map(\.method) == ["POST", "GET"])
        #expect(stub.requests.first?.body == Data("x".utf8))
    }

    @Test("routes answer by template, then by path, otherwise 404")
    func routes() async throws {
        let stub = StubBackend.routes([
            "/apps/{id}": BackendResponse(status: 200),
            "/health": BackendResponse(status: 503),
        ])
        #expect(try await stub.perform(BackendRequest(url: url, route: "/apps/{id}")).status == 200)
        #expect(try await stub.perform(BackendRequest(url: URL(string: "https://api.example.com/health")!)).status == 503)
        #expect(try await stub.perform(BackendRequest(url: url)).status == 404)
    }

    @Test("sequence answers in turn and repeats the last outcome; failing throws the error")
    func sequenceAndFailing() async throws {
        let stub = StubBackend.sequence([.failing(URLError(.timedOut)), .status(500), .status(200)])
        await #expect(throws: URLError.self) { try await stub.perform(BackendRequest(url: url)) }
        #expect(try await stub.perform(BackendRequest(url: url)).status == 500)
        #expect(try await stub.perform(BackendRequest(url: url)).status == 200)
        #expect(try await stub.perform(BackendRequest(url: url)).status == 200)
        let failing = StubBackend.failing(URLError(.notConnectedToInternet))
        await #expect(throws: URLError.self) { try await failing.perform(BackendRequest(url: url)) }
    }

    @Test("behind TracingBackend, each answer is one request event with its status or error")
    func traced() async throws {
        try await withTestTracer { traces in
            let backend = TracingBackend(StubBackend.sequence([.failing(URLError(.timedOut)), .status(503)]))
            _ = try? await backend.perform(BackendRequest(url: url, route: "/apps/{id}"))
            _ = try await backend.perform(BackendRequest(url: url, route: "/apps/{id}", attempt: 2))
            #expect(traces.requests.map(\.error) == ["URLError.timedOut", nil])
            #expect(traces.requests.map(\.status) == [nil, 503])
            #expect(traces.requests.map(\.attempt) == [1, 2])
            #expect(traces.requests.allSatisfy { $0.host == "api.example.com" && $0.route == "/apps/{id}" })
        }
    }
}
