import APITraceTestSupport
import APITraceServerTestSupport
@testable import APITraceCapture
import APITraceFormat
import APITraceTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `URLSessionTaskMetrics` in `request` events. Linux's `URLSession` never delivers metrics, so the
/// mapping is fed the instants a transaction reports and the join is fed its two callbacks
/// directly (a stand-in for Apple's `URLSession`, which cannot run here); the wrapper itself runs
/// against a real server.
@Suite("URLSession task metrics")
struct URLSessionTimingTests {
    typealias Timing = TraceEvent.Request.Timing

    /// Collects what a join writes.
    final class Writes: Sendable {
        private let values = Locked([Timing?]())
        var all: [Timing?] { values.withLock { $0 } }
        func write(_ timing: Timing?) { values.withLock { $0.append(timing) } }
    }

    static let t0 = Date(timeIntervalSince1970: 1_795_341_600)
    static func at(_ ms: Double) -> Date { t0.addingTimeInterval(ms / 1000) }

    @Test("a new TLS connection: DNS, connect with TLS inside it, time to first byte, protocol")
    func newConnection() {
        let timing = Timing(
            fetchStart: Self.at(0), domainLookupStart: Self.at(1), domainLookupEnd: Self.at(6),
            connectStart: Self.at(6), connectEnd: Self.at(46), secureConnectionStart: Self.at(21),
            secureConnectionEnd: Self.at(46), responseStart: Self.at(90), networkProtocol: "h2", reusedConnection: false)
        #expect(abs(timing.dnsMs! - 5) < 0.001)
        #expect(abs(timing.connectMs! - 40) < 0.001)
        #expect(abs(timing.tlsMs! - 25) < 0.001)
        #expect(abs(timing.firstByteMs! - 90) < 0.001)
        #expect(timing.networkProtocol == "h2")
        #expect(timing.reusedConnection == false)
    }

    @Test("a reused connection has no DNS, connect or TLS phase")
    func reusedConnection() {
        let timing = Timing(
            fetchStart: Self.at(0), domainLookupStart: nil, domainLookupEnd: nil, connectStart: nil, connectEnd: nil,
            secureConnectionStart: nil, secureConnectionEnd: nil, responseStart: Self.at(12),
            networkProtocol: "http/1.1", reusedConnection: true)
        #expect(timing.dnsMs == nil && timing.connectMs == nil && timing.tlsMs == nil)
        #expect(abs(timing.firstByteMs! - 12) < 0.001)
        #expect(timing.networkProtocol == "http/1.1" && timing.reusedConnection == true)
    }

    @Test("a phase running backwards (the wall clock moved) or missing an end is left out")
    func backwardsPhases() {
        let timing = Timing(
            fetchStart: Self.at(50), domainLookupStart: Self.at(10), domainLookupEnd: Self.at(5),
            connectStart: Self.at(6), connectEnd: nil, secureConnectionStart: nil, secureConnectionEnd: Self.at(9),
            responseStart: Self.at(40), networkProtocol: nil, reusedConnection: false)
        #expect(timing == Timing(reusedConnection: false))
    }

    @Test("only short ALPN ids are kept as the protocol", arguments: [
        ("h2", true), ("h3", true), ("http/1.1", true), ("http/1.0", true), ("spdy/3.1", true),
        ("", false), ("H2", false), ("h2\u{0}", false), ("h2\n", false), ("Bearer sk_live_abcdefghij", false),
        (String(repeating: "h", count: 17), false), ("héllo", false),
    ])
    func protocolNames(name: String, kept: Bool) {
        #expect((Timing.alpnToken(name) != nil) == kept)
    }

    @Test("metrics before the completion: written once, at the completion, with them")
    func metricsFirst() {
        let join = TaskTimingJoin(waitsForMetrics: true, grace: .seconds(60))
        let writes = Writes()
        join.measured(Timing(firstByteMs: 3))
        #expect(writes.all.isEmpty)
        join.complete { writes.write($0) }
        #expect(writes.all == [Timing(firstByteMs: 3)])
        join.measured(Timing(firstByteMs: 99))
        #expect(writes.all == [Timing(firstByteMs: 3)])
    }

    @Test("metrics after the completion: written once, when they come")
    func completionFirst() {
        let join = TaskTimingJoin(waitsForMetrics: true, grace: .seconds(60))
        let writes = Writes()
        join.complete { writes.write($0) }
        #expect(writes.all.isEmpty)
        join.measured(Timing(dnsMs: 1))
        #expect(writes.all == [Timing(dnsMs: 1)])
    }

    @Test("metrics that never come: written without them after the grace, and late ones change nothing")
    func metricsNeverCome() async throws {
        let join = TaskTimingJoin(waitsForMetrics: true, grace: .milliseconds(100))
        let writes = Writes()
        join.complete { writes.write($0) }
        try await waitUntil("the write after the grace", seconds: 30) { !writes.all.isEmpty }
        #expect(writes.all.count == 1 && writes.all[0] == nil)
        join.measured(Timing(dnsMs: 1))
        try await Task.sleep(for: .milliseconds(300))
        #expect(writes.all.count == 1)
    }

    @Test("where no metrics are delivered (Linux), the completion writes at once and the task keeps no delegate")
    func noMetricsPlatform() async throws {
        let join = TaskTimingJoin(waitsForMetrics: false)
        let writes = Writes()
        join.complete { writes.write($0) }
        #expect(writes.all.count == 1 && writes.all[0] == nil)
        let task = URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:9/")!)
        join.attach(to: task)
        #expect(task.delegate == nil)
        task.cancel()
    }

    @Test("2,000 joins with their callbacks racing on other threads are each written exactly once")
    func racingCallbacks() async throws {
        let writes = (0..<2000).map { _ in Writes() }
        await withTaskGroup(of: Void.self) { group in
            for (i, w) in writes.enumerated() {
                let join = TaskTimingJoin(waitsForMetrics: true, grace: .seconds(30))
                group.addTask { join.complete { w.write($0) } }
                group.addTask { join.measured(Timing(firstByteMs: Double(i))) }
            }
        }
        for (i, w) in writes.enumerated() {
            #expect(w.all == [Timing(firstByteMs: Double(i))], "join \(i)")
        }
    }

    @Test("on this platform the wrapper's events carry the duration and no timing, and are not held back")
    func wrapperOnLinux() async throws {
        let traces = TestTracer()
        try await TestServer.run { base in
            let session = TracedURLSession(tracer: traces.tracer)
            _ = try await session.data(for: URLRequest(url: base.appendingPathComponent("apps/7")))
            let request = try #require(traces.requests.first)
            #expect(request.status == 200)
            // Apple platforms: the phases of the loopback connection (not built here); Linux: none.
            #expect((request.timing != nil) == TaskTimingJoin.platformDeliversMetrics)
        }
    }
}
