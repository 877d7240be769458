import APITraceCapture
import APITraceTesting
import Foundation
import Testing

// What a user's own test of their instrumentation looks like (README, "Testing your instrumentation"):
// a repository of theirs over an HTTPBackend, a stub answering with a payload that misses a key,
// and assertions on the events apitrace recorded.

private struct AppsResponse: Decodable {
    struct App: Decodable {
        let id: Int
        let name: String
    }
    let apps: [App]
}

private struct AppsRepository {
    let backend: any HTTPBackend
    let decoder = TracedJSONDecoder()   // tracer: .shared, the test's inside withTestTracer

    func apps() async throws -> [AppsResponse.App] {
        let response = try await backend.perform(BackendRequest(url: URL(string: "https://api.example.com/apps")!, route: "/apps"))
        return try decoder.decode(AppsResponse.self, from: response.body, route: "/apps").apps
    }
}

@Suite("Testing a user's instrumentation")
struct UserInstrumentationTests {
    @Test("a payload missing a key records the request and the decode failure at its path")
    func missingKey() async throws {
        try await withTestTracer { traces in
            let stub = StubBackend.json(#"{"apps": [{"id": 1, "name": "Otec"}, {"id": 2}]}"#)
            let repository = AppsRepository(backend: TracingBackend(stub))
            await #expect(throws: DecodingError.self) { try await repository.apps() }

            #expect(traces.requests.map(\.route) == ["/apps"])
            #expect(traces.requests.first?.status == 200)
            let failure = try #require(traces.decodeFailures.first)
            #expect(failure.path == "apps[1].name")
            #expect(failure.kind == .keyNotFound)
            #expect(failure.entity == "App")
            #expect(failure.route == "/apps")
        }
    }
}
