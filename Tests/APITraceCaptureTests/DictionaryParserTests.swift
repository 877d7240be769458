import APITraceTestSupport
import APITraceServerTestSupport
import APITraceCapture
import APITraceTesting
import Foundation
import Testing

@Suite("Jayme-style dictionary parsing")
struct DictionaryParserTests {
    @Test("entities at a key path skip the app without stability and record its path")
    func entities() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let response = try await URLSessionBackend().perform(BackendRequest(url: base.appendingPathComponent("apps")))
            let apps = try DictionaryParser(tracer: traces.tracer).entities(DictionaryApp.self, from: response.body, at: "data.apps", route: "/apps")
            #expect(apps.map(\.id) == [1, 3])
            let failures = traces.decodeFailures
            #expect(failures.count == 1)
            let failure = try #require(failures.first)
            #expect(failure.entity == "DictionaryApp")
            #expect(failure.kind == .keyNotFound)
            #expect(failure.path == "data.apps[1].stability")
            #expect(failure.key == "stability")
            #expect(failure.route == "/apps")
        }
    }

    @Test("one entity rethrows the original error after recording it")
    func entityRethrows() throws {
        let traces = TestTracer()
        let data = Data(#"{"data":{"app":{"id":2,"name":"Fabric"}}}"#.utf8)
        #expect(throws: DictionaryParsingError(.keyNotFound, key: "stability")) {
            _ = try DictionaryParser(tracer: traces.tracer).entity(DictionaryApp.self, from: data, at: "data.app", route: "/apps/{id}")
        }
        #expect(traces.decodeFailures.first?.path == "data.app.stability")
    }

    @Test("nested entities name the full path, wrong types and missing containers are recorded")
    func nestedAndWrongTypes() throws {
        let traces = TestTracer()
        let parser = DictionaryParser(tracer: traces.tracer)
        #expect(throws: DictionaryParsingError.self) {
            _ = try parser.entity(OwnedApp.self, from: Data(#"{"owner":{"nick":"x"}}"#.utf8))
        }
        #expect(throws: DictionaryParsingError.self) {
            _ = try parser.entity(DictionaryApp.self, from: Data(#"{"id":"one","name":"a","stability":1}"#.utf8))
        }
        #expect(throws: DictionaryParsingError.self) {
            _ = try parser.entities(DictionaryApp.self, from: Data(#"{"data":{}}"#.utf8), at: "data.apps")
        }
        let failures = traces.decodeFailures
        #expect(failures.map(\.path) == ["owner.name", "id", "data.apps"])
        #expect(failures.map(\.kind) == [.keyNotFound, .typeMismatch, .keyNotFound])
    }
}

@Suite("Dictionary parsing of top-level arrays")
struct DictionaryParserTopLevelTests {
    @Test("a top-level array is parsed lossily; invalid JSON is recorded and thrown")
    func topLevel() throws {
        let traces = TestTracer()
        let parser = DictionaryParser(tracer: traces.tracer)
        let apps = try parser.entities(DictionaryApp.self, from: Data(#"[{"id":1,"name":"a","stability":1},{"id":2,"name":"b"},7]"#.utf8))
        #expect(apps.map(\.id) == [1])
        #expect(throws: DictionaryParsingError.self) {
            _ = try parser.entities(DictionaryApp.self, from: Data("{oops".utf8))
        }
        let failures = traces.decodeFailures
        #expect(failures.map(\.path) == ["[1].stability", "[2]", ""])
        #expect(failures.map(\.kind) == [.keyNotFound, .typeMismatch, .dataCorrupted])
    }
}
