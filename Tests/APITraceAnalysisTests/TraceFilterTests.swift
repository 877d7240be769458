import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import APITraceSynthetic
import Foundation
import Testing

@Suite("Filters")
struct TraceFilterTests {
    static let base: Int64 = 1_795_341_600_000
    static let times: [(String, Int64)] = [
        ("2026-11-22T10:00:00Z", base),
        ("2h", base - 7_200_000),
        ("30m", base - 1_800_000),
        ("90s", base - 90_000),
        ("7d", base - 604_800_000),
        ("1w", base - 604_800_000),
    ]

    @Test("times parse as RFC 3339 or as durations back from now", arguments: times)
    func parseTimes(text: String, expected: Int64) throws {
        let now = TraceTimestamp(millisecondsSince1970: 1_795_341_600_000)
        #expect(try TraceFilter.parseTime(text, now: now).millisecondsSince1970 == expected)
    }

    @Test("malformed times are rejected with the option named", arguments: ["yesterday", "2x", "-3h", ""])
    func badTimes(text: String) {
        #expect(throws: TraceFilter.InvalidTime.self) { try TraceFilter(since: text) }
    }

    @Test("--since/--until, --route, --host and --app-version keep exactly the matching events")
    func filtersMatchIndependentSelection() throws {
        let traces = try GeneratedTraces(events: 6000, files: 4, seed: 21)
        let all = traces.allEvents
        let since = all[1500].timestamp, until = all[4500].timestamp

        func requests(_ filter: TraceFilter) -> Int {
            TraceSummarizer(filter: filter).summarize(files: traces.paths).requests.requests
        }
        func expected(_ keep: (TraceEvent, TraceEvent.Request, Int) -> Bool) -> Int {
            var n = 0
            for (fileIndex, events) in traces.events.enumerated() {
                for e in events { if case .request(let r) = e.payload, keep(e, r, fileIndex) { n += 1 } }
            }
            return n
        }
        #expect(requests(TraceFilter(since: since, until: until)) == expected { e, _, _ in e.timestamp >= since && e.timestamp < until })
        #expect(requests(TraceFilter(route: "/apps/{id}")) == expected { _, r, _ in r.route == "/apps/{id}" })
        #expect(requests(TraceFilter(route: "/apps*")) == expected { _, r, _ in r.route.hasPrefix("/apps") })
        #expect(requests(TraceFilter(host: "cdn.example.com")) == expected { _, r, _ in r.host == "cdn.example.com" })
        // Route and host are patterns in one grammar: * anywhere, more than once; without one, exact.
        #expect(requests(TraceFilter(route: "*/{id}*")) == expected { _, r, _ in r.route.contains("/{id}") })
        #expect(requests(TraceFilter(host: "*.example.com")) == expected { _, r, _ in r.host?.hasSuffix(".example.com") == true })
        #expect(requests(TraceFilter(host: "cdn.*")) == expected { _, r, _ in r.host?.hasPrefix("cdn.") == true })
        #expect(requests(TraceFilter(host: "*.example.com")) > requests(TraceFilter(host: "cdn.example.com")))
        #expect(requests(TraceFilter(host: "*.example.org")) == 0)
        // Even files are written as app version 2.3.0, odd ones as 2.4.0.
        #expect(requests(TraceFilter(appVersion: "2.4.0")) == expected { _, _, file in file % 2 == 1 })

        let routeOnly = TraceSummarizer(filter: TraceFilter(route: "/apps")).summarize(files: traces.paths)
        let decodeOnApps = all.filter { if case .decodeFailure(let d) = $0.payload { return d.route == "/apps" }; return false }.count
        #expect(routeOnly.decodeFailureCount == decodeOnApps)
        #expect(routeOnly.eventsByType["log"] == nil)
        let versionOnly = TraceSummarizer(filter: TraceFilter(appVersion: "2.4.0")).summarize(files: traces.paths)
        #expect(versionOnly.filesRead == 2)
        #expect(versionOnly.filesFiltered == 2)
    }

    @Test("files whose name says they started after --until (plus the skew slack) are not opened")
    func skipsLaterFilesByName() throws {
        let traces = try GeneratedTraces(events: 4000, files: 4, seed: 8)
        let until = traces.generator.header(file: 2).started.adding(milliseconds: -TraceFileSelection.slack)
        let summary = TraceSummarizer(filter: TraceFilter(until: until)).summarize(files: traces.paths)
        #expect(summary.filesFiltered == 2)
        #expect(summary.events == traces.allEvents.filter { $0.timestamp < until }.count)
    }

    @Test("a file whose first events are stamped before its name's start is still read up to --until")
    func skewedFileIsRead() throws {
        let traces = try GeneratedTraces(events: 4000, files: 4, seed: 8)
        // --until a minute after file 2 starts: file 2 can hold events before it, so it is opened.
        let until = traces.generator.header(file: 2).started.adding(milliseconds: 60_000)
        let summary = TraceSummarizer(filter: TraceFilter(until: until)).summarize(files: traces.paths)
        #expect(summary.events == traces.allEvents.filter { $0.timestamp < until }.count)
        #expect(summary.filesRead >= 3)
    }

    @Test("the time series floors an instant as the one bucket function does, and never traps on one",
          arguments: [Int64.min, -60_001, -1, 0, 59_999, 60_000, 1_795_341_659_999, Int64.max])
    func timeSeriesBuckets(milliseconds: Int64) {
        for granularity: Int64 in [1, 60, 3600, 86_400] {
            let start = TimeSeries(granularitySeconds: granularity).bucketStart(milliseconds: milliseconds)
            let seconds = EpochBuckets.index(of: milliseconds, width: 1000)
            #expect(start == EpochBuckets.start(of: seconds, width: granularity))
            #expect(start <= seconds && seconds - start < granularity)
        }
    }
}
