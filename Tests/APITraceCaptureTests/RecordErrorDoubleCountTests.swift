import APITraceCapture
import APITraceTestSupport
import APITraceTesting
import Foundation
import Testing

/// The README's pattern, traced call then `recordError(error)` in the catch, counts each failure once:
/// the traced decoder or request already recorded it.
@Suite("recordError after a traced failure")
struct RecordErrorDoubleCountTests {
    static let missingStability = Data(#"{"data":{"apps":[{"id":1,"name":"Otec","stability":0.9},{"id":2,"name":"Jayme"}]}}"#.utf8)

    @Test("a decode failure caught and passed to recordError is one decode_failure, no error event; a second recordError of it is written")
    func decodeFailure() throws {
        let traces = TestTracer()
        var caught: (any Error)?
        do { _ = try TracedJSONDecoder(tracer: traces.tracer).decode(AppsResponse.self, from: Self.missingStability, route: "/apps") } catch { caught = error }
        let error = try #require(caught)
        traces.tracer.recordError(error, userInfo: ["screen": "apps"])
        #expect(traces.decodeFailures.map(\.path) == ["data.apps[1].stability"])
        #expect(traces.errors.isEmpty)
        // One traced failure absorbs one report of it: the app reporting it again is its own choice.
        traces.tracer.recordError(error)
        #expect(traces.errors.map(\.identity) == ["DecodingError.keyNotFound"])
    }

    @Test("a transport failure of a traced request (connection refused by a real port) caught and recorded is counted once")
    func transportFailure() async throws {
        let traces = TestTracer()
        let port = try freePort()   // reserved, nothing listens: connections are refused
        let backend = TracingBackend(URLSessionBackend(), tracer: traces.tracer)
        do {
            _ = try await backend.perform(BackendRequest(url: URL(string: "http://127.0.0.1:\(port)/apps")!, route: "/apps"))
            Issue.record("the request should have failed")
        } catch {
            traces.tracer.recordError(error)
        }
        let requests = traces.requests
        #expect(requests.count == 1 && requests.first?.error != nil)
        #expect(traces.errors.isEmpty, "\(traces.events)")
    }

    @Test("an error the tracer did not record is written even right after a traced failure")
    func otherErrorsAreWritten() throws {
        let traces = TestTracer()
        do { _ = try TracedJSONDecoder(tracer: traces.tracer).decode(AppsResponse.self, from: Self.missingStability) } catch {}
        traces.tracer.recordError(NewsError.offline)
        traces.tracer.recordError(URLError(.timedOut))
        #expect(traces.errors.map(\.identity) == ["NewsError.offline", "URLError.timedOut"])
    }

    @Test("memory is bounded: of 100 traced failures only the last 64 are remembered")
    func bounded() throws {
        let traces = TestTracer(configuration: .init(errorRateLimit: nil, logging: .disabled))
        var errors: [any Error] = []
        for i in 0..<100 {
            // Each body misses a different key path, so every error has its own description.
            let body = Data(#"{"data":{"apps":[\#(String(repeating: #"{"id":1,"name":"a","stability":1},"#, count: i))"x"]}}"#.utf8)
            do { _ = try TracedJSONDecoder(tracer: traces.tracer).decode(AppsResponse.self, from: body) } catch { errors.append(error) }
        }
        #expect(errors.count == 100)
        for error in errors { traces.tracer.recordError(error) }
        #expect(traces.errors.count == 36)
    }
}
