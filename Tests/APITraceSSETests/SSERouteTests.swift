import APITraceSSE
import Testing

@Suite("Routes of SSE trace events")
struct SSERouteTests {
    @Test("ids in paths become {id}; other segments stay", arguments: [
        ("/apps/42/events", "/apps/{id}/events"),
        ("/streams/3f2a9c1e-8b7d-4c6a-9e5f-0a1b2c3d4e5f", "/streams/{id}"),
        ("/users/5f3e2a1b9c8d7e6f/feed", "/users/{id}/feed"),
        ("/news/stream", "/news/stream"),
        ("/v2/feed", "/v2/feed"),
        ("/deadbeefdeadbeef/x", "/deadbeefdeadbeef/x"),  // hex-looking words without a digit stay
        ("", "/"),
    ])
    func normalize(_ path: String, _ route: String) {
        #expect(SSERoute.normalize(path) == route)
    }
}
