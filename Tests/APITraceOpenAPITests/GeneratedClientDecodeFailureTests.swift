import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceOpenAPI
import APITraceTesting
import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import OpenAPIURLSession
import Testing

/// The OpenAPI document the client below stands for.
private let document = """
openapi: "3.1.0"
info:
  title: Apps
  version: 1.0.0
paths:
  /apps:
    get:
      operationId: listApps
      responses:
        "200":
          description: ok
  "/apps/{appID}":
    get:
      operationId: getApp
      parameters:
        - name: appID
          in: path
          required: true
          schema:
            type: integer
      responses:
        "200":
          description: ok
components:
  schemas:
    App:
      type: object
"""

/// A client in the shape swift-openapi-generator emits (UniversalClient, Converter, operation ids),
/// written by hand because the generator's build plugin is too slow to build in these tests.
private struct AppsClient {
    struct App: Codable, Sendable { var id: Int; var name: String; var stability: Double }
    struct AppsBody: Codable, Sendable { struct Payload: Codable, Sendable { var apps: [App] }; var data: Payload }

    let client: UniversalClient
    let converter = Converter(configuration: .init())

    func listApps() async throws -> AppsBody {
        try await client.send(
            input: (),
            forOperation: "listApps",
            serializer: { _ in (HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/apps"), nil) },
            deserializer: { [converter] _, body in try await converter.getResponseBodyAsJSON(AppsBody.self, from: body, transforming: { $0 }) }
        )
    }

    func getApp(_ id: Int) async throws -> App {
        try await client.send(
            input: id,
            forOperation: "getApp",
            serializer: { id in (HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/apps/\(id)"), nil) },
            deserializer: { [converter] _, body in try await converter.getResponseBodyAsJSON(App.self, from: body, transforming: { $0 }) }
        )
    }
}

@Suite("Generated OpenAPI client: decode failures and routes from the document")
struct GeneratedClientDecodeFailureTests {
    @Test("routes come from the document's operation ids, YAML or JSON")
    func routesFromDocument() throws {
        #expect(try OpenAPIRoutes.parse(document) == ["listApps": "/apps", "getApp": "/apps/{appID}"])
        let json = #"{"openapi":"3.1.0","paths":{"/apps/{appID}":{"get":{"operationId":"getApp"}},"/apps":{"get":{"operationId":"listApps"},"post":{"operationId":"createApp"}}}}"#
        #expect(try OpenAPIRoutes.parse(json) == ["listApps": "/apps", "createApp": "/apps", "getApp": "/apps/{appID}"])
        #expect(throws: OpenAPIRoutes.ReadError.self) { try OpenAPIRoutes.parse("{\"openapi\": 3}") }
    }

    @Test("a response missing a key records a decode failure with the full path and the operation's route")
    func missingKey() async throws {
        let traces = TestTracer(configuration: .init(logging: .disabled))
        let tracer = traces.tracer
        let routes = try OpenAPIRoutes.parse(document)
        try await TestServer.run { base in
            let middleware = TracingClientMiddleware(tracer: tracer, routes: routes)
            let apps = AppsClient(client: UniversalClient(serverURL: base, transport: URLSessionTransport(), middlewares: [middleware]))
            let app = try await tracer.recordingDecodeFailures { try await apps.getApp(42) }
            #expect(app.id == 42)
            await #expect(throws: ClientError.self) {
                _ = try await tracer.recordingDecodeFailures { try await apps.listApps() }
            }
        }
        let requests = traces.requests
        #expect(requests.map(\.route) == ["/apps/{appID}", "/apps"])
        let failures = traces.decodeFailures
        #expect(failures.count == 1)
        let failure = try #require(failures.first)
        #expect(failure.path == "data.apps[1].stability")
        #expect(failure.key == "stability")
        #expect(failure.kind == .keyNotFound)
        #expect(failure.route == "/apps")
        #expect(failure.entity == "listApps.Output")
    }
}
