import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceTesting
import Foundation
import Testing

@Suite("Traced JSON decoding of real responses")
struct TracedJSONDecoderTests {
    @Test("a missing key records the full path with the key and rethrows the original error")
    func missingStability() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let backend = URLSessionBackend()
            let response = try await backend.perform(BackendRequest(url: base.appendingPathComponent("apps")))
            let decoder = TracedJSONDecoder(tracer: traces.tracer)
            do {
                _ = try decoder.decode(AppsResponse.self, from: response.body, route: "/apps")
                Issue.record("decoding should fail")
            } catch DecodingError.keyNotFound(let key, let context) {
                #expect(key.stringValue == "stability")
                #expect(context.codingPath.count == 3)  // data, apps, [1]: the key is not part of it
            }
            let failure = try #require(traces.decodeFailures.first)
            #expect(traces.events.count == 1)
            #expect(failure.entity == "App")  // the model that failed, not the envelope
            #expect(failure.message.hasPrefix("decoding AppsResponse: "))
            #expect(failure.kind == .keyNotFound)
            #expect(failure.path == "data.apps[1].stability")
            #expect(failure.key == "stability")
            #expect(failure.route == "/apps")
            #expect(!failure.message.contains("Fabric"))  // never the payload
        }
    }

    @Test("nested arrays give every index in the path")
    func nestedArrays() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let response = try await URLSessionBackend().perform(BackendRequest(url: base.appendingPathComponent("groups")))
            #expect(throws: DecodingError.self) {
                _ = try TracedJSONDecoder(tracer: traces.tracer).decode(GroupsResponse.self, from: response.body, route: "/groups")
            }
            let failure = try #require(traces.decodeFailures.first)
            #expect(failure.path == "data.groups[1].apps[1].stability")
            #expect(failure.key == "stability")
        }
    }

    @Test("type mismatches, nulls and invalid JSON record their kind and path")
    func otherKinds() throws {
        let traces = TestTracer()
        let decoder = TracedJSONDecoder(tracer: traces.tracer)
        #expect(throws: DecodingError.self) {
            _ = try decoder.decode([App].self, from: Data(#"[{"id":1,"name":"a","stability":"high"}]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            _ = try decoder.decode([App].self, from: Data(#"[{"id":1,"name":null,"stability":1}]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            _ = try decoder.decode([App].self, from: Data("not json".utf8))
        }
        let failures = traces.decodeFailures
        #expect(failures.map(\.kind) == [.typeMismatch, .valueNotFound, .dataCorrupted])
        #expect(failures.map(\.path) == ["[0].stability", "[0].name", ""])
        #expect(failures.map(\.key) == ["stability", "name", nil])
        #expect(failures.map(\.entity) == ["App", "App", "Array<App>"])
    }

    @Test("a lossy array keeps the good elements and records each skipped one")
    func lossyArray() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let response = try await URLSessionBackend().perform(BackendRequest(url: base.appendingPathComponent("apps")))
            let decoded = try TracedJSONDecoder(tracer: traces.tracer).decode(LossyAppsResponse.self, from: response.body, route: "/apps")
            #expect(decoded.data.apps.map(\.id) == [1, 3])
            let failures = traces.decodeFailures
            #expect(failures.count == 1)
            #expect(failures.first?.entity == "App")
            #expect(failures.first?.path == "data.apps[1].stability")
            #expect(failures.first?.route == "/apps")
        }
    }

    @Test("a lossy array records every bad element, not just the first")
    func lossyArrayManyBad() throws {
        let traces = TestTracer()
        let json = #"{"data":{"apps":[{"id":1},{"id":2,"name":"b","stability":1},{"name":"c"},{"id":"x","name":"d","stability":1}]}}"#
        let decoded = try TracedJSONDecoder(tracer: traces.tracer).decode(LossyAppsResponse.self, from: Data(json.utf8))
        #expect(decoded.data.apps.map(\.id) == [2])
        let failures = traces.decodeFailures
        #expect(failures.map(\.path) == ["data.apps[0].name", "data.apps[2].id", "data.apps[3].id"])
        #expect(failures.map(\.kind) == [.keyNotFound, .keyNotFound, .typeMismatch])
    }
}

@Suite("Decode failures name the model that failed")
struct ModelTypeTests {
    struct Envelope<Payload: Decodable & Sendable>: Decodable, Sendable { var data: Payload }
    struct AppsPayload: Decodable, Sendable { var apps: [Product] }
    struct Product: Decodable, Sendable { var id: Int; var latest: Build?; var tags: [String] }
    struct Build: Decodable, Sendable { var version: String; var number: Int }

    @Test("the innermost Decodable type at the failing path is the entity; the envelope starts the message", arguments: [
        (#"{"data":{"apps":[{"id":1,"tags":[]},{"id":2,"latest":{"number":3},"tags":[]}]}}"#, "Build", "data.apps[1].latest.version"),
        (#"{"data":{"apps":[{"id":1,"tags":[]},{"id":"x","tags":[]}]}}"#, "Product", "data.apps[1].id"),
        (#"{"data":{"apps":[{"id":1,"tags":[1]}]}}"#, "Product", "data.apps[0].tags[0]"),
        (#"{"data":{"items":[]}}"#, "AppsPayload", "data.apps"),
    ])
    func innermostModel(json: String, entity: String, path: String) throws {
        let traces = TestTracer()
        #expect(throws: DecodingError.self) {
            _ = try TracedJSONDecoder(tracer: traces.tracer).decode(Envelope<AppsPayload>.self, from: Data(json.utf8))
        }
        let failure = try #require(traces.decodeFailures.first)
        #expect(failure.path == path)
        #expect(failure.entity == entity)
        #expect(failure.message.hasPrefix("decoding Envelope<AppsPayload>: "))
        #expect(traces.events.count == 1)  // the second decode records nothing
    }
}
