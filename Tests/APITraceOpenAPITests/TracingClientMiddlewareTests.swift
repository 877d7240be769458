import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceOpenAPI
import APITraceTesting
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import Testing

/// Runs the middleware in front of the real URLSession transport, as a generated client would.
private func send(
    _ middleware: TracingClientMiddleware, method: HTTPRequest.Method, path: String, operationID: String,
    body: HTTPBody? = nil, base: URL
) async throws -> (HTTPResponse, HTTPBody?) {
    let transport = URLSessionTransport()
    let request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
    return try await middleware.intercept(request, body: body, baseURL: base, operationID: operationID) { request, body, url in
        try await transport.send(request, body: body, baseURL: url, operationID: operationID)
    }
}

@Suite("OpenAPI client middleware against a real server")
struct TracingClientMiddlewareTests {
    @Test("a request records method, route by operation id, host, status, bytes and attempt")
    func routeFromOperation() async throws {
        let traces = TestTracer(configuration: .init(logging: .disabled))
        let tracer = traces.tracer
        try await TestServer.run { base in
            let middleware = TracingClientMiddleware(tracer: tracer, routes: ["getApp": "/apps/{appID}"])
            let (response, body) = try await send(middleware, method: .get, path: "/apps/42", operationID: "getApp", base: base)
            #expect(response.status.code == 200)
            let bytes = try await Data(collecting: try #require(body), upTo: 1 << 20)
            guard case .request(let request) = try #require(traces.sink.events.first).payload else {
                Issue.record("not a request event")
                return
            }
            #expect(request.method == "GET")
            #expect(request.route == "/apps/{appID}")
            #expect(request.host == "127.0.0.1")
            #expect(request.status == 200)
            #expect(request.durationMs > 0)
            #expect(request.bytesIn == Int64(bytes.count))
            #expect(request.bytesOut == 0)
            #expect(request.error == nil)
            #expect(request.attempt == 1)
        }
    }

    @Test("unknown operations get a normalized route; server errors keep their status; traceparent is injected")
    func normalizedAndErrors() async throws {
        let traces = TestTracer(configuration: .init(logging: .disabled))
        let tracer = traces.tracer
        try await TestServer.run { base in
            let middleware = TracingClientMiddleware(tracer: tracer, injectsTraceParent: true)
            _ = try await send(middleware, method: .get, path: "/apps/7?token=abc", operationID: "getApp", base: base)
            _ = try await send(middleware, method: .get, path: "/fail", operationID: "fail", base: base)
            let (_, body) = try await send(middleware, method: .get, path: "/headers", operationID: "headers", base: base)
            let echoed = try JSONSerialization.jsonObject(with: try await Data(collecting: try #require(body), upTo: 1 << 20)) as? [String: String]
            let requests = traces.requests
            #expect(requests.map(\.route) == ["/apps/{id}", "/fail", "/headers"])
            #expect(requests.map(\.status) == [200, 500, 200])
            let sent = try #require(echoed?["traceparent"])
            #expect(traces.sink.events.last?.traceID == TraceParent(headerValue: sent)?.traceID)
        }
    }

    @Test("a transport failure records the error identity and rethrows")
    func transportFailure() async throws {
        let traces = TestTracer(configuration: .init(logging: .disabled))
        let tracer = traces.tracer
        let closed = try await TestServer.run { $0 }
        let middleware = TracingClientMiddleware(tracer: tracer)
        await #expect(throws: (any Error).self) {
            _ = try await send(middleware, method: .get, path: "/apps", operationID: "listApps", base: closed)
        }
        guard case .request(let request) = try #require(traces.sink.events.first).payload else {
            Issue.record("not a request event")
            return
        }
        #expect(request.status == nil)
        #expect(request.error == "URLError.cannotConnectToHost")
    }
}
