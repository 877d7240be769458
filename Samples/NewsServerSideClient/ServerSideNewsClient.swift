public import APITraceCapture
import APITraceDistributedTracing
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Tracing

/// A server-side client of the sample news server over AsyncHTTPClient, traced with no call-site
/// change: the client's tracing configuration points at a ``RequestSpanTracer``, and AsyncHTTPClient
/// reports every request as a span.
///
/// ```swift
/// let client = ServerSideNewsClient(baseURL: "http://127.0.0.1:8080", recorder: .shared)
/// let papers = try await client.newspapers()
/// try await client.shutdown()
/// ```
public final class ServerSideNewsClient: Sendable {
    /// A newspaper as the server sends it.
    public struct Newspaper: Decodable, Sendable, Equatable {
        public var id: Int
        public var name: String
    }

    /// A news item as the server sends it.
    public struct News: Decodable, Sendable, Equatable {
        public var id: Int
        public var title: String
    }

    struct Envelope<Payload: Decodable>: Decodable {
        var data: Payload
    }

    /// Thrown for a status other than 2xx.
    public struct StatusError: Error, Equatable {
        public var status: Int
    }

    /// Base URL such as `http://127.0.0.1:8080`.
    public let baseURL: String
    let http: HTTPClient
    let decoder: TracedJSONDecoder

    /// Creates the client; `request` events go to `recorder`.
    public init(baseURL: String, recorder: APITracer) {
        self.baseURL = baseURL
        var configuration = HTTPClient.Configuration()
        configuration.tracing.tracer = RequestSpanTracer(recorder: recorder)
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        decoder = TracedJSONDecoder(tracer: recorder)
    }

    /// `GET /newspapers`.
    public func newspapers() async throws -> [Newspaper] {
        try await get("/newspapers", route: "/newspapers")
    }

    /// `GET /news/{id}`.
    public func news(id: Int) async throws -> News {
        try await get("/news/\(id)", route: "/news/{id}")
    }

    /// Shuts the HTTP client down; call once when done.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    private func get<Payload: Decodable>(_ path: String, route: String) async throws -> Payload {
        // Plain AsyncHTTPClient code: nothing here knows about apitrace but the decoder.
        let response = try await http.execute(HTTPClientRequest(url: baseURL + path), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(Int(response.status.code)) else { throw StatusError(status: Int(response.status.code)) }
        return try decoder.decode(Envelope<Payload>.self, from: Data(body.readableBytesView), route: route).data
    }
}
