import APITraceCapture
import APITraceFormat
import APITraceSSE
import APITraceTesting
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Synchronization
import Testing

/// Collects state changes from a listener.
final class StateRecorder: Sendable {
    private let states = Mutex<[EventSourceState]>([])
    func record(_ state: EventSourceState) { states.withLock { $0.append(state) } }
    var all: [EventSourceState] { states.withLock { $0 } }
}

/// A client on `path` of the test server, tracing into memory, with short delays.
func makeSource(
    _ base: URL, _ path: String, traces: TestTracer,
    policy: ReconnectPolicy = ReconnectPolicy(initialDelay: .milliseconds(20), minimumDelay: .milliseconds(5), maximumDelay: .milliseconds(400)),
    configure: (inout EventSource.Configuration) -> Void = { _ in }
) -> EventSource {
    var configuration = EventSource.Configuration(
        url: URL(string: path, relativeTo: base)!.absoluteURL, reconnect: policy, idleTimeout: .seconds(30),
        tracer: traces.tracer)
    configure(&configuration)
    return EventSource(configuration: configuration)
}

/// Reads every event until the sequence ends, giving up after `limit` events.
func collect(_ source: EventSource, limit: Int = 1000) async throws -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for try await event in source.events() {
        events.append(event)
        if events.count >= limit { break }
    }
    return events
}

extension TestTracer {
    /// The `sse` events of one phase.
    func sse(_ phase: TraceEvent.SSE.Phase) -> [TraceEvent.SSE] { sse.filter { $0.phase == phase } }
}

enum DropMode: String, CaseIterable, Sendable {
    case end, error, partial
    var closeReason: String { self == .end ? "end_of_stream" : "network_error" }
}

@Suite("EventSource against a real SSE server")
struct EventSourceTests {
    @Test("no event is lost or duplicated across drops; ids resume from Last-Event-ID; one reconnect per drop",
          arguments: DropMode.allCases)
    func resumesAcrossDrops(_ mode: DropMode) async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let source = makeSource(base, "/numbers?total=12&drop=5&mode=\(mode.rawValue)&retry=30", traces: traces)
            let states = StateRecorder()
            source.onStateChange(states.record)
            let events = try await collect(source)

            #expect(events.map(\.id) == (1...12).map(String.init))
            #expect(events.map(\.data) == (1...12).map { "event \($0)\nline 2" })
            #expect(events.allSatisfy { $0.type == "message" })
            #expect(log.requests.map(\.lastEventID) == [nil, "5", "10", "12"])

            // Three connections dropped (after 5, 10 and 12 events), then 204.
            #expect(traces.sse(.reconnect).count == 3)
            #expect(traces.sse(.reconnect).map(\.lastEventID) == ["5", "10", "12"])
            #expect(traces.sse(.reconnect).map(\.attempt) == [2, 3, 4])
            #expect(traces.sse(.open).count == 3)
            #expect(traces.sse(.open).allSatisfy { $0.status == 200 && ($0.durationMs ?? -1) >= 0 })
            let closes = traces.sse(.close)
            #expect(closes.map(\.reason) == [mode.closeReason, mode.closeReason, mode.closeReason, "http_status"])
            #expect(closes.map(\.events) == [5, 5, 2, 0])
            #expect(closes.last?.status == 204)
            #expect(traces.sse(.fail).isEmpty)
            #expect(states.all == [.connecting, .open, .connecting, .open, .connecting, .open, .connecting, .closed])
            #expect(source.state == .closed)
            #expect(source.lastEventID == "12")
        }
    }

    @Test("backoff delays stay within equal-jitter bounds of the server's retry, and the server waits at least that long")
    func backoffWithinBounds() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let policy = ReconnectPolicy(initialDelay: .seconds(5), minimumDelay: .milliseconds(5), maximumDelay: .milliseconds(100), resetAfter: .seconds(600))
            let source = makeSource(base, "/numbers?total=5&drop=1&mode=error&retry=20", traces: traces, policy: policy)
            _ = try await collect(source)

            let delays = traces.sse(.reconnect).map { $0.delayMs ?? -1 }
            #expect(delays.count == 5)
            for (n, delay) in delays.enumerated() {
                // The server's retry (20 ms) replaces the 5 s initial delay; doubling per retry; capped at 100 ms.
                let ceiling = min(100.0, 20.0 * Double(1 << n))
                #expect(delay >= ceiling / 2 && delay <= ceiling, "reconnect \(n): \(delay) ms not in \(ceiling / 2)...\(ceiling)")
            }
            let requests = log.requests
            for n in 1..<requests.count {
                let gap = (requests[n].at - requests[n - 1].at)
                #expect(gap >= .milliseconds(delays[n - 1]), "request \(n) came \(gap) after the previous one")
            }
        }
    }

    @Test("with the top of the jitter range, delays double up to the cap; a healthy connection resets them")
    func backoffDoublesAndResets() async throws {
        try await TestServer.runSSE { base, _ in
            let top: @Sendable (ClosedRange<Double>) -> Double = { $0.upperBound }
            let growing = TestTracer()
            let noReset = ReconnectPolicy(minimumDelay: .milliseconds(5), maximumDelay: .milliseconds(70), resetAfter: .seconds(600), random: top)
            _ = try await collect(makeSource(base, "/numbers?total=4&drop=1&retry=10", traces: growing, policy: noReset))
            #expect(growing.sse(.reconnect).map(\.delayMs) == [10, 20, 40, 70])

            let resetting = TestTracer()
            let reset = ReconnectPolicy(minimumDelay: .milliseconds(5), maximumDelay: .milliseconds(70), resetAfter: .zero, random: top)
            _ = try await collect(makeSource(base, "/numbers?total=4&drop=1&retry=10", traces: resetting, policy: reset))
            #expect(resetting.sse(.reconnect).map(\.delayMs) == [10, 10, 10, 10])
        }
    }

    @Test("a silent connection is dropped after the idle timeout and resumed")
    func idleTimeout() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            // The timeout also covers the wait for the response head, so leave a loaded machine room
            // to answer (3 s was seen to pass before the head under a full parallel test run); the
            // server's silence (20 s) is far longer still.
            let source = makeSource(base, "/silent", traces: traces) { $0.idleTimeout = .seconds(8) }
            let events = try await collect(source)
            #expect(events.map(\.data) == ["one", "two", "three", "four"])
            #expect(log.requests.map(\.lastEventID) == [nil, "2", "4"])
            #expect(traces.sse(.close).map(\.reason) == ["idle_timeout", "end_of_stream", "http_status"])
            #expect(traces.sse(.reconnect).count == 2)
        }
    }

    @Test("204 stops for good: no event, no open, no reconnect, no error")
    func noContentStops() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let source = makeSource(base, "/status/204", traces: traces)
            let states = StateRecorder()
            source.onStateChange(states.record)
            let events = try await collect(source)
            #expect(events.isEmpty)
            #expect(log.requests.count == 1)
            #expect(traces.sse.map(\.phase) == [.close])
            #expect(traces.sse.first?.status == 204)
            #expect(states.all == [.connecting, .closed])
            #expect(source.failure == nil)
        }
    }

    @Test("a non-200 status or a wrong Content-Type fails with a typed error, without reconnecting or saying open",
          arguments: [("/status/500", EventSourceError.Code.httpStatus, 500), ("/status/401", .httpStatus, 401),
                      ("/wrong-type", .contentType, 200)])
    func failures(_ path: String, _ code: EventSourceError.Code, _ status: Int) async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let secret = "Bearer s3cr3t-token"
            let source = makeSource(base, path + "?token=abc", traces: traces) { $0.headers = [("Authorization", secret)] }
            let states = StateRecorder()
            source.onStateChange(states.record)
            var caught: EventSourceError?
            do {
                _ = try await collect(source)
            } catch let error as EventSourceError {
                caught = error
            }
            #expect(caught?.code == code)
            #expect(caught?.status == status)
            #expect(source.failure == caught)
            let message = caught.map(String.init(describing:)) ?? ""
            #expect(message.contains(path) && message.contains("HTTP 200"))
            #expect(!message.contains("s3cr3t") && !message.contains("token=abc"))
            #expect(log.requests.count == 1)
            #expect(traces.sse.map(\.phase) == [.fail])
            #expect(traces.sse.first?.reason == code.description)
            #expect(traces.sse.first?.status == status)
            #expect(states.all == [.connecting, .closed])
        }
    }

    @Test("with retryOnHTTPError, a 500 is retried with backoff until the stream works")
    func retryOnHTTPError() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let source = makeSource(base, "/flaky?failures=2&total=3&drop=3", traces: traces) { $0.retryOnHTTPError = true }
            let events = try await collect(source)
            #expect(events.map(\.id) == ["1", "2", "3"])
            #expect(log.requests.count == 4)
            #expect(traces.sse(.close).map(\.reason) == ["http_status", "http_status", "end_of_stream", "http_status"])
            #expect(traces.sse(.close).map(\.status) == [500, 500, 200, 204])
            #expect(traces.sse(.reconnect).count == 3)
            #expect(traces.sse(.open).count == 1)
        }
    }

    @Test("a refused connection is retried with growing delays and never reported open")
    func refusedConnection() async throws {
        // A server that ran and stopped leaves a port nobody listens on.
        let base = try await TestServer.runSSE { base, _ in base }
        let traces = TestTracer()
        let policy = ReconnectPolicy(initialDelay: .milliseconds(5), minimumDelay: .milliseconds(5), maximumDelay: .milliseconds(40), random: { $0.upperBound })
        let source = makeSource(base, "/numbers", traces: traces, policy: policy)
        let states = StateRecorder()
        source.onStateChange(states.record)
        source.start()
        for _ in 0..<400 where traces.sse(.reconnect).count < 4 { try await Task.sleep(for: .milliseconds(25)) }
        source.close()
        await source.waitUntilStopped()
        let reconnects = traces.sse(.reconnect)
        #expect(reconnects.count >= 4)
        #expect(reconnects.prefix(4).map(\.delayMs) == [5, 10, 20, 40])
        #expect(reconnects.prefix(4).map(\.attempt) == [2, 3, 4, 5])
        #expect(traces.sse(.open).isEmpty)
        #expect(traces.sse(.close).prefix(4).allSatisfy { $0.reason == "network_error" && $0.status == nil && $0.events == 0 })
        #expect(!states.all.contains(.open))
        #expect(states.all.last == .closed)
    }

    @Test("close() ends the sequence, closes the connection and traces closed_by_client")
    func closeStopsEverything() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let source = makeSource(base, "/endless", traces: traces)
            var received = 0
            for try await _ in source.events() {
                received += 1
                if received == 3 { source.close() }
                #expect(received <= 3 || source.state == .closed)
            }
            await source.waitUntilStopped()
            #expect(source.state == .closed)
            #expect(traces.sse.last?.phase == .close)
            #expect(traces.sse.last?.reason == "closed_by_client")
            #expect(traces.sse(.reconnect).isEmpty)
            // The server notices the connection is gone; bounded wait.
            for _ in 0..<200 where log.streamsEnded == 0 { try await Task.sleep(for: .milliseconds(25)) }
            #expect(log.streamsEnded == 1)
            #expect(log.requests.count == 1)
            // A stopped client hands out finished sequences.
            var after = 0
            for try await _ in source.events() { after += 1 }
            #expect(after == 0)
        }
    }

    @Test("POST with a body and custom headers; header values never reach the trace")
    func postWithHeaders() async throws {
        try await TestServer.runSSE { base, _ in
            let traces = TestTracer()
            let source = makeSource(base, "/echo", traces: traces) {
                $0.method = "POST"
                $0.body = Data("hello-body".utf8)
                $0.headers = [("X-Custom", "custom-value"), ("Authorization", "Bearer s3cr3t")]
            }
            let events = try await collect(source)
            #expect(events.map(\.data) == ["POST hello-body custom-value"])
            let lines = traces.events.map(\.jsonLine).joined()
            #expect(!lines.contains("s3cr3t") && !lines.contains("custom-value"))
            #expect(traces.sse(.open).first?.route == "/echo")
        }
    }

    @Test("per-type listeners see only their type; the sequence sees everything")
    func listeners() async throws {
        try await TestServer.runSSE { base, _ in
            let news = Mutex<[String]>([])
            let all = Mutex<[String]>([])
            let source = makeSource(base, "/typed", traces: TestTracer())
            source.addListener(for: "news") { event in news.withLock { $0.append(event.data) } }
            source.addListener { event in all.withLock { $0.append(event.type) } }
            let events = try await collect(source)
            #expect(events.map(\.type) == ["news", "message", "news"])
            #expect(events.map(\.id) == ["1", "2", "3"])
            #expect(news.withLock { $0 } == ["a", "c"])
            #expect(all.withLock { $0 } == ["news", "message", "news"])
        }
    }
}
