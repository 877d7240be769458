import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("Summaries checked against an independent count of the generated events")
struct TraceSummarizerTests {
    /// Written here from REFERENCE.md's list, not taken from the code under test.
    static let clientSideIdentities: Set<String> = [
        "URLError.cancelled", "CancellationError", "URLError.notConnectedToInternet", "URLError.dataNotAllowed",
        "URLError.internationalRoamingOff", "URLError.callIsActive", "URLError.backgroundSessionWasDisconnected",
    ]

    @Test("totals, per-route counts and bytes are exact; percentiles within the documented error")
    func numbersMatchIndependentComputation() throws {
        let traces = try GeneratedTraces(events: 9000, files: 3, seed: 42)
        let summary = TraceSummarizer().summarize(paths: [traces.folder.path])
        let report = TraceReport(summary: summary)
        let events = traces.allEvents

        #expect(summary.filesRead == 3)
        #expect(summary.warnings.isEmpty)
        #expect(summary.events == events.count)
        var byType: [String: Int] = [:]
        for e in events { byType[e.type, default: 0] += 1 }
        #expect(summary.eventsByType == byType)

        // Per route, computed the plain way.
        // Client-side outcomes (Docs/trace-format.md): not API failures, left out of every rate.
        struct Expected { var n = 0, s5 = 0, s4 = 0, transport = 0, clientSide = 0; var bytesIn: Int64 = 0; var durations: [Double] = [] }
        var expected: [String: Expected] = [:]
        for e in events {
            guard case .request(let r) = e.payload else { continue }
            let key = r.method + " " + r.route
            expected[key, default: Expected()].n += 1
            if let s = r.status {
                if s >= 500 { expected[key]!.s5 += 1 } else if s >= 400 { expected[key]!.s4 += 1 }
            } else if Self.clientSideIdentities.contains(r.error ?? "") {
                expected[key]!.clientSide += 1
            } else {
                expected[key]!.transport += 1
            }
            expected[key]!.bytesIn += r.bytesIn ?? 0
            expected[key]!.durations.append(r.durationMs)
        }
        #expect(report.routes.count == expected.count)
        for row in report.routes {
            let want = try #require(expected[row.method + " " + row.route])
            #expect(row.requests == want.n)
            #expect(row.serverErrors == want.s5)
            #expect(row.clientErrors == want.s4)
            #expect(row.transportErrors == want.transport)
            #expect(row.bytesIn == want.bytesIn)
            #expect(abs(row.errorRate - Double(want.s5 + want.transport) / Double(want.n - want.clientSide)) < 1e-12)
            for (p, got) in [(50.0, row.latency.p50), (95, row.latency.p95), (99, row.latency.p99)] {
                let exact = exactPercentile(want.durations, p)
                let value = try #require(got)
                #expect(value >= exact - 0.0005, "p\(p) of \(row.route): \(value) below exact \(exact)")
                #expect(value <= exact * (1 + QuantileSketch.relativeError) + 0.0005, "p\(p) of \(row.route): \(value) vs exact \(exact)")
            }
        }
        let requests = expected.values.reduce(0) { $0 + $1.n }
        let errors = expected.values.reduce(0) { $0 + $1.s5 + $1.transport }
        #expect(report.totals.requests == requests)
        #expect(report.totals.errors == errors)
        #expect(report.totals.clientErrors == expected.values.reduce(0) { $0 + $1.s4 })
        #expect(report.timeSeries.points.reduce(0) { $0 + $1.requests } == requests)
        #expect(report.timeSeries.points.reduce(0) { $0 + $1.errors } == errors)
    }

    @Test("decode failures group by entity, kind and folded path; errors count suppressed repeats; SSE and drops add up")
    func sections() throws {
        let traces = try GeneratedTraces(events: 6000, files: 2, seed: 9)
        let report = TraceReport(summary: TraceSummarizer().summarize(files: traces.paths))
        let events = traces.allEvents

        var decode: [String: Int] = [:]
        var identities: [String: Int] = [:]
        var opens = 0, reconnects = 0, fails = 0, dropped = 0
        var delays: [Double] = []
        for e in events {
            switch e.payload {
            case .decodeFailure(let d):
                let folded = d.path.replacingOccurrences(of: #"\[[0-9]+\]"#, with: "[*]", options: .regularExpression)
                decode[d.entity + "|" + d.kind.rawValue + "|" + folded, default: 0] += 1
            case .error(let x): identities[x.identity, default: 0] += 1 + (x.suppressed ?? 0)
            case .sse(let s):
                if s.phase == .open { opens += 1 }
                if s.phase == .reconnect { reconnects += 1; delays.append(s.delayMs!) }
                if s.phase == .fail { fails += 1 }
            case .dropped(let d): dropped += d.count
            default: break
            }
        }
        #expect(Dictionary(uniqueKeysWithValues: report.decodeFailures.map { ($0.entity + "|" + $0.kind + "|" + $0.path, $0.count) }) == decode)
        let stability = try #require(report.decodeFailures.first { $0.path == "data.apps[*].stability" })
        #expect(stability.isMissingKey)
        #expect(stability.key == "stability")
        #expect(stability.examplePaths.contains("data.apps[3].stability"))
        #expect(stability.routes.map(\.route) == ["/apps"])
        for row in report.errors where row.source == "recorded" {
            #expect(row.occurrences == identities[row.identity])
            #expect(!row.examples.isEmpty)
        }
        #expect(report.sse.connections == opens)
        #expect(report.sse.reconnects == reconnects)
        #expect(report.sse.fails == fails)
        let p95 = try #require(report.sse.reconnectDelay.p95)
        #expect(p95 >= exactPercentile(delays, 95) && p95 <= exactPercentile(delays, 95) * (1 + QuantileSketch.relativeError))
        #expect(report.totals.dropped == dropped)
    }

    @Test("the raw-line fast path counts exactly what the decoded-event path counts")
    func fastPathAgreesWithDecodedPath() throws {
        let traces = try GeneratedTraces(events: 3000, files: 1, seed: 3)
        var decoded = TraceAggregator()
        for event in traces.events[0] { decoded.add(event) }
        let a = TraceReport(summary: decoded.summary())
        let b = TraceReport(summary: TraceSummarizer().summarize(files: traces.paths))
        #expect(a.totals.events == b.totals.events)
        #expect(a.totals.errors == b.totals.errors)
        #expect(a.routes.map(\.requests) == b.routes.map(\.requests))
        #expect(a.routes.map(\.latency) == b.routes.map(\.latency))
        #expect(a.decodeFailures.map(\.count) == b.decodeFailures.map(\.count))
        #expect(a.errors.map(\.occurrences) == b.errors.map(\.occurrences))
    }

    @Test("sampled successes are scaled by 1/sample_rate; errors are not")
    func sampling() throws {
        let traces = try GeneratedTraces(events: 4000, files: 1, seed: 5, sampleRate: 0.25)
        let report = TraceReport(summary: TraceSummarizer().summarize(files: traces.paths))
        var successes = 0, others = 0
        for e in traces.allEvents {
            guard case .request(let r) = e.payload else { continue }
            if let s = r.status, s < 400 { successes += 1 } else if r.status != nil || !Self.clientSideIdentities.contains(r.error ?? "") { others += 1 }
        }
        #expect(report.totals.sampledRequests == successes)
        #expect(abs(report.totals.estimatedRequests - Double(others + successes * 4)) < 1e-6)
        #expect(abs(report.totals.errorRate - Double(report.totals.errors) / Double(others + successes * 4)) < 1e-12)
    }

    @Test("--include-decode-failures folds decode failures into errors")
    func foldDecodeFailures() throws {
        let traces = try GeneratedTraces(events: 3000, files: 1, seed: 11)
        let summary = TraceSummarizer().summarize(files: traces.paths)
        let apart = TraceReport(summary: summary)
        let folded = TraceReport(summary: summary, options: .init(includeDecodeFailures: true))
        #expect(folded.totals.errors == apart.totals.errors + apart.totals.decodeFailures)
        let apps = try #require(folded.routes.first { $0.method == "GET" && $0.route == "/apps" })
        let appsApart = try #require(apart.routes.first { $0.method == "GET" && $0.route == "/apps" })
        #expect(apps.errors == appsApart.errors + appsApart.decodeFailures)
        #expect(appsApart.decodeFailures > 0)
        #expect(folded.definitions.contains { $0.contains("counted as an error here") })
    }
}

@Suite("Memory stays bounded")
struct BoundedMemoryTests {
    @Test("thousands of distinct routes fold into one (other) row; counts stay exact")
    func routeCardinality() {
        var aggregator = TraceAggregator()
        let t = TraceTimestamp(millisecondsSince1970: 1_795_341_600_000)
        for i in 0..<3000 {
            aggregator.add(TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/items/\(i)", status: i % 10 == 0 ? 500 : 200, durationMs: 5))))
            aggregator.add(TraceEvent(timestamp: t, .error(.init(identity: "E.case\(i)", message: "m", route: "/items/\(i)"))))
        }
        var other = TraceAggregator()
        other.add(TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/fresh", durationMs: 5))))
        var summary = aggregator.summary()
        summary.merge(other.summary())
        #expect(summary.routes.count <= TraceSummary.maximumRoutes)
        #expect(summary.routes[.other] != nil)
        #expect(summary.routes.values.reduce(0) { $0 + $1.counts.requests } == 3001)
        #expect(summary.routes.values.reduce(0) { $0 + $1.counts.serverErrors } == 300)
        #expect(summary.errors.count <= TraceSummary.maximumKeys)
        #expect(summary.errors.values.reduce(0) { $0 + $1.events } == 3000)
    }
}
