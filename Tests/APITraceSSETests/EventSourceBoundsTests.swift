import APITraceCapture
import APITraceFormat
import APITraceSSE
import APITraceTesting
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Synchronization
import Testing

/// Collects the errors an ``EventSource`` reports.
final class ErrorRecorder: Sendable {
    private let errors = Mutex<[EventSourceError]>([])
    func record(_ error: EventSourceError) { errors.withLock { $0.append(error) } }
    var all: [EventSourceError] { errors.withLock { $0 } }
}

@Suite("EventSource bounds its server: line and event limits, a reconnect floor, bounded ids")
struct EventSourceBoundsTests {
    @Test("an endless data: line, or data: lines that never end an event, fail the connection with a typed error traced as fail, then reconnect with growing backoff; the client never waits for the end",
          arguments: [("/hostile/endless-line", EventSourceError.Code.lineTooLong, 256 << 10),
                      ("/hostile/never-dispatch", .eventTooLarge, 1 << 20)])
    func floodsAreCutAtTheLimit(_ path: String, _ code: EventSourceError.Code, _ limit: Int) async throws {
        try await TestServer.runSSE { base, _ in
            let traces = TestTracer()
            let top: @Sendable (ClosedRange<Double>) -> Double = { $0.upperBound }
            // The server says `retry: 1`; the floor (5 ms here) holds and the backoff doubles per violation.
            let policy = ReconnectPolicy(initialDelay: .milliseconds(20), minimumDelay: .milliseconds(5),
                                         maximumDelay: .seconds(1), random: top)
            // The server gives up after 64 MB per connection (64 times the limits): a client without
            // limits reads to the end and fails here, it does not hang.
            let source = makeSource(base, path + "?cap=64", traces: traces, policy: policy) {
                $0.limits = ServerSentEventParser.Limits(maximumLineBytes: 256 << 10, maximumEventBytes: 1 << 20)
            }
            let errors = ErrorRecorder()
            source.onError(errors.record)
            let states = StateRecorder()
            source.onStateChange(states.record)
            source.start()
            for _ in 0..<2400 where traces.sse(.fail).count < 3 { try await Task.sleep(for: .milliseconds(25)) }
            source.close()
            await source.waitUntilStopped()

            let fails = traces.sse(.fail)
            #expect(fails.count >= 3)
            #expect(fails.allSatisfy { $0.reason == code.description && $0.status == 200 && $0.events == 0 })
            #expect(errors.all.count >= 3)
            #expect(errors.all.allSatisfy { $0.code == code && $0.limit == limit })
            #expect(errors.all.first.map(String.init(describing:))?.contains("\(limit) bytes") == true)
            #expect(source.failure == nil, "a limit drops the connection; it does not stop the client")
            // One reconnect after each violation, the delay doubling from the floor: the violating
            // connections never count as healthy.
            #expect(traces.sse(.reconnect).prefix(3).map(\.delayMs) == [5, 10, 20])
            #expect(traces.sse(.open).count >= 3)
            #expect(traces.sse(.close).filter { $0.reason != "closed_by_client" }.isEmpty)
            #expect(!states.all.isEmpty && states.all.last == .closed)
            // The client's memory under such a server is measured on the real `apitrace listen` process
            // (ListenHostileServerTests): what the test server counts as written includes its own buffers.
        }
    }

    @Test("the parser stops at the first line or event past its limit and keeps the events before it",
          arguments: [1, 3, 64, 4096])
    func parserLimits(_ chunkSize: Int) {
        let limits = ServerSentEventParser.Limits(maximumLineBytes: 20, maximumEventBytes: 30)
        func run(_ text: String) -> (events: [ServerSentEvent], exceeded: ServerSentEventParser.LimitExceeded?) {
            var parser = ServerSentEventParser(limits: limits)
            let bytes = Array(text.utf8)
            var events: [ServerSentEvent] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + chunkSize)
                events += parser.push(Array(bytes[start..<end]))
                start = end
            }
            return (events, parser.limitExceeded)
        }
        // A line of exactly 20 bytes passes; 21 does not, whether or not it ends.
        let exact = "data: " + String(repeating: "a", count: 14)
        #expect(run(exact + "\n\n").events.map(\.data) == [String(repeating: "a", count: 14)])
        #expect(run(exact + "\n\n").exceeded == nil)
        let long = run("id: 1\ndata: ok\n\ndata: " + String(repeating: "b", count: 15) + "\n\ndata: later\n\n")
        #expect(long.events.map(\.data) == ["ok"])
        #expect(long.exceeded == .init(kind: .lineTooLong, limit: 20))
        #expect(run("data: ok\n\n: " + String(repeating: "c", count: 100)).exceeded?.kind == .lineTooLong)
        // Data of exactly 30 bytes (lines joined with LF) passes; one more byte does not.
        let thirty = "data: 0123456789\ndata: 0123456789\ndata: 01234567\n\n"
        #expect(run(thirty).events.map { $0.data.utf8.count } == [30])
        let over = run("data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\ndata: never\n\n")
        #expect(over.events.isEmpty)
        #expect(over.exceeded == .init(kind: .eventTooLarge, limit: 30))
        // Empty data lines count their line feeds: an endless run of `data` lines is bounded too.
        #expect(run(String(repeating: "data\n", count: 40)).exceeded?.kind == .eventTooLarge)
    }

    @Test("after a limit the parser ignores the stream; finishStream() starts the next one clean, keeping the last id")
    func parserRecoversOnTheNextStream() {
        var parser = ServerSentEventParser(limits: .init(maximumLineBytes: 16, maximumEventBytes: 64))
        #expect(parser.push(Array("id: 7\ndata: a\n\ndata: \(String(repeating: "z", count: 40))\n\n".utf8)).map(\.data) == ["a"])
        #expect(parser.limitExceeded?.kind == .lineTooLong)
        #expect(parser.push(Array("data: ignored\n\n".utf8)).isEmpty)
        parser.finishStream()
        #expect(parser.limitExceeded == nil)
        #expect(parser.push(Array("data: b\n\n".utf8)).map { [$0.id, $0.data] } == [["7", "b"]])
    }

    @Test("retry: 0 cannot make a reconnect storm: the default floor holds every delay, and the delays grow over short-lived connections")
    func retryZeroIsFloored() async throws {
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            var configuration = EventSource.Configuration(
                url: URL(string: "/hostile/retry-zero", relativeTo: base)!.absoluteURL, tracer: traces.tracer)
            configuration.idleTimeout = .seconds(30)
            let source = EventSource(configuration: configuration)  // the default ReconnectPolicy
            let window = Duration.seconds(3)
            source.start()
            // Four connections take about 3.5 s at the floor; a loaded machine may take longer.
            for _ in 0..<1200 where log.requests.count < 4 { try await Task.sleep(for: .milliseconds(25)) }
            source.close()
            await source.waitUntilStopped()

            let all = log.requests
            #expect(all.count >= 4)
            // Floor 0.5 s: at most window / floor + 1 connections in any window; main made thousands.
            let bound = Int(window / ReconnectPolicy().minimumDelay) + 1
            for start in all {
                let inWindow = all.filter { $0.at >= start.at && $0.at - start.at < window }.count
                #expect(inWindow <= bound, "\(inWindow) connections in \(window)")
            }
            let requests = all
            for n in 1..<requests.count {
                let gap = requests[n].at - requests[n - 1].at
                #expect(gap >= .milliseconds(500), "connection \(n + 1) came \(gap) after the previous one")
            }
            let delays = traces.sse(.reconnect).compactMap(\.delayMs)
            #expect(delays.allSatisfy { $0 >= 500 })
            // Equal jitter from a doubling ceiling: reconnect n waits at least 500 * 2^(n-1) ms (n >= 1).
            for (n, delay) in delays.enumerated() where n >= 1 {
                #expect(delay >= 500 * Double(1 << (n - 1)), "reconnect \(n): \(delay) ms")
            }
        }
    }

    @Test("a 50 MB id breaks the line limit: the connection fails and reconnects, the id never reaches the trace")
    func fiftyMegabyteID() async throws {
        try await TestServer.runSSE { base, _ in
            let traces = TestTracer()
            let source = makeSource(base, "/hostile/huge-id?bytes=\(50 << 20)", traces: traces)
            source.start()
            for _ in 0..<2400 where traces.sse(.reconnect).count < 2 { try await Task.sleep(for: .milliseconds(25)) }
            source.close()
            await source.waitUntilStopped()
            #expect(traces.sse(.fail).count >= 2)
            #expect(traces.sse(.fail).allSatisfy { $0.reason == "line_too_long" })
            #expect(traces.sse(.reconnect).count >= 2)
            #expect(source.lastEventID.isEmpty)
            #expect(traces.events.map { $0.jsonLine.utf8.count }.max() ?? 0 < 4096)
        }
    }

    @Test("an id within the line limit reaches the trace and the log line cut to a few hundred bytes, saying how much was cut")
    func longIDIsClippedInTraces() async throws {
        let bytes = 40_000
        try await TestServer.runSSE { base, log in
            let traces = TestTracer()
            let source = makeSource(base, "/hostile/huge-id?bytes=\(bytes)", traces: traces)
            source.start()
            for _ in 0..<2400 where traces.sse(.reconnect).count < 2 { try await Task.sleep(for: .milliseconds(25)) }
            source.close()
            await source.waitUntilStopped()
            // The client keeps the whole id and sends it back: it is the server's to choose.
            #expect(source.lastEventID == String(repeating: "7", count: bytes))
            #expect(log.requests.dropFirst().first?.lastEventID?.count == bytes)
            let reconnects = traces.sse(.reconnect)
            #expect(reconnects.count >= 2)
            for reconnect in reconnects {
                let id = reconnect.lastEventID ?? ""
                #expect(id.utf8.count <= 256)
                #expect(id.hasPrefix("7777") && id.hasSuffix("bytes)"))
                let cut = Int(id.split(separator: "+").last?.split(separator: " ").first ?? "") ?? -1
                #expect(cut + id.prefix { $0 == "7" }.count == bytes, "the marker says how many bytes were cut")
                #expect(reconnect.summary.utf8.count < 400)
            }
            #expect(traces.events.map { $0.jsonLine.utf8.count }.max() ?? 0 < 4096)
        }
    }
}
