import APITraceTestSupport
import APITraceAlerting
import APITraceFormat
import Foundation
import Testing

@Suite struct WindowedFailureCounterTests {
    let now = TraceFixture.now.millisecondsSince1970
    let minute = TraceFixture.minute

    /// Counts requests and failures of a window straight from the generated events.
    func expected(_ events: [TraceEvent], from: Int64, to: Int64, route: String? = nil) -> (requests: Double, failures: Double) {
        var requests = 0.0, failures = 0.0
        for e in events {
            guard case .request(let r) = e.payload, (from..<to).contains(e.timestamp.millisecondsSince1970) else { continue }
            if let route, r.route != route { continue }
            let failed = r.status == nil || (500...599).contains(r.status!)
            requests += failed ? 1 : 1 / (r.sampleRate ?? 1)
            if failed { failures += 1 }
        }
        return (requests, failures)
    }

    @Test func windowTotalsMatchAnIndependentCountOfTheEvents() throws {
        let dir = TemporaryDirectory()
        let events = TraceFixture.events([
            .init(from: -360, to: -30, perMinute: 30, failureRatio: 0.01),
            .init(from: -30, to: 0, perMinute: 30, failureRatio: 0.4),
            .init(from: -120, to: 0, perMinute: 12, failureRatio: 0.25, route: "/news", sampleRate: 0.5),
        ])
        try TraceFixture.write(events, to: dir.path)
        let rule = AlertRule(name: "all", slo: 0.99)
        let newsRule = AlertRule(name: "news", scope: .init(route: "/news"), slo: 0.99)
        let result = WindowedFailureCounter(rules: [rule, newsRule], ranges: rule.countedRanges(from: now, to: now)).count(paths: [dir.path])
        for window in [5, 30, 60, 360] as [Int64] {
            let range = (now - window * minute)..<now
            let want = expected(events, from: range.lowerBound, to: range.upperBound)
            let got = result.counts[0].totals(in: range)
            #expect(got.requests == want.requests, "requests over \(window)m")
            #expect(got.failures == want.failures, "failures over \(window)m")
            let wantNews = expected(events, from: range.lowerBound, to: range.upperBound, route: "/news")
            #expect(result.counts[1].totals(in: range) == WindowTotals(requests: wantNews.requests, failures: wantNews.failures))
        }
        // Sampled successes count double: 12 a minute with 3 failures and 9 successes kept at 0.5 -> 21 requests a minute.
        #expect(result.counts[1].totals(in: (now - 60 * minute)..<now).requests == 60 * 21)
    }

    @Test func onlyFilesThatCanHoldTheWindowsAreOpened() throws {
        let dir = TemporaryDirectory()
        // 24 hourly files; the longest window is 6 h, so 6 files (plus the one starting just before, by its slack) are read.
        try TraceFixture.write(TraceFixture.events([.init(from: -24 * 60, to: 0, perMinute: 2, failureRatio: 0)]), to: dir.path)
        let rule = AlertRule(name: "all", slo: 0.99)
        let result = WindowedFailureCounter(rules: [rule], ranges: rule.countedRanges(from: now, to: now)).count(paths: [dir.path])
        #expect(result.filesFound == 24)
        #expect(result.filesOpened == 7)
        #expect(result.counts[0].totals(in: (now - 360 * minute)..<now).requests == 720)
    }

    @Test func evidenceNamesTheFailingRoutesErrorsAndDecodePaths() throws {
        let dir = TemporaryDirectory()
        var events = TraceFixture.events([
            .init(from: -10, to: 0, perMinute: 10, failureRatio: 0.5, route: "/apps/{id}"),
            .init(from: -10, to: 0, perMinute: 10, failureRatio: 0.2, route: "/news", failureStatus: nil),
        ])
        for i in 0..<7 {
            events.append(TraceEvent(timestamp: TraceFixture.at(minutes: -2).adding(milliseconds: Int64(i)), .decodeFailure(.init(
                route: "/apps/{id}", entity: "App", kind: .keyNotFound, path: "data.apps[\(i)].stability", key: "stability", message: "missing"))))
        }
        events.append(TraceEvent(timestamp: TraceFixture.at(minutes: -1), .error(.init(identity: "NewsError.offline", message: "offline"))))
        try TraceFixture.write(events.sorted { $0.timestamp < $1.timestamp }, to: dir.path)
        let rule = AlertRule(name: "all", slo: 0.99)
        let result = WindowedFailureCounter(rules: [rule], ranges: rule.countedRanges(from: now, to: now), evidenceRanges: [(now - 60 * minute)..<now])
            .count(paths: [dir.path])
        let tally = result.evidence[0]
        #expect(tally.routes["/apps/{id}"] == WindowTotals(requests: 100, failures: 50))
        #expect(tally.routes["/news"] == WindowTotals(requests: 100, failures: 20))
        #expect(tally.errorIdentities == ["HTTP 503": 50, "URLError.timedOut": 20, "NewsError.offline": 1])
        #expect(tally.decodePaths == ["App data.apps[*].stability": 7])
    }

    @Test func theCountCacheServesFinishedFilesAndGivesTheSameTotals() throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        var traffic = [TraceFixture.Traffic(from: -360, to: 0, perMinute: 20, failureRatio: 0.05)]
        try TraceFixture.write(TraceFixture.events(traffic), to: traces)
        let rule = AlertRule(name: "all", slo: 0.99)
        let ranges = rule.countedRanges(from: now, to: now)
        let plain = WindowedFailureCounter(rules: [rule], ranges: ranges).count(paths: [traces])
        let first = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces])
        let second = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces])
        #expect(first.filesFromCache == 0 && first.filesOpened == 6)
        // Five hourly files have a successor (finished); the last one may still grow and is read every time.
        #expect(second.filesFromCache == 5 && second.filesOpened == 1)
        for window in [5, 60, 360] as [Int64] {
            let range = (now - window * minute)..<now
            #expect(second.counts[0].totals(in: range) == plain.counts[0].totals(in: range))
            #expect(first.counts[0].totals(in: range) == plain.counts[0].totals(in: range))
        }
        // A file replaced by another (a copy renamed over it: same size and modification time, new
        // inode) is counted afresh, as the report's cache would.
        let replaced = try #require(TraceFileDiscovery.find([traces]).files.first)
        let wholeSecond = Date(timeIntervalSince1970: 1_795_000_000)  // whole seconds: exactly the same on both files
        try FileManager.default.setAttributes([.modificationDate: wholeSecond], ofItemAtPath: replaced)
        let restored = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces])
        #expect(restored.filesFromCache == 4)  // the touched file is counted and stored again
        #expect(WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces]).filesFromCache == 5)
        try FileManager.default.copyItem(atPath: replaced, toPath: dir.file("copy"))
        try FileManager.default.setAttributes([.modificationDate: wholeSecond], ofItemAtPath: dir.file("copy"))
        #expect(FileStatus(path: dir.file("copy"))?.modifiedNanoseconds == FileStatus(path: replaced)?.modifiedNanoseconds)
        #expect(rename(dir.file("copy"), replaced) == 0)
        let afterReplace = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces])
        #expect(afterReplace.filesFromCache == 4 && afterReplace.filesOpened == 2)
        #expect(afterReplace.counts[0].totals(in: (now - 360 * minute)..<now) == plain.counts[0].totals(in: (now - 360 * minute)..<now))
        // A rewritten file (different size) is counted afresh; a different rule is not served stale counts.
        traffic[0].failureRatio = 0.5
        try TraceFixture.write(TraceFixture.events(traffic), to: traces)
        let rewritten = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces])
        #expect(rewritten.filesFromCache == 0)
        #expect(rewritten.counts[0].totals(in: (now - 360 * minute)..<now).failures == 3600)
        let other = AlertRule(name: "news", scope: .init(route: "/news"), slo: 0.99)
        let scoped = WindowedFailureCounter(rules: [other], ranges: ranges, cache: FileCountCache(path: dir.file("c"))).count(paths: [traces])
        #expect(scoped.filesFromCache == 0 && scoped.counts[0].totals(in: (now - 360 * minute)..<now).requests == 0)
    }

    @Test func aCachedRunThatNoLongerDecodesIsCountedAfreshAndEveryBucketStaysTheSame() throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        // Sampled traffic: weights of 1/0.3 are not whole numbers, so a bucket's sum depends on the
        // order files are added in; cached and read files must be merged in the same order as a plain count.
        let traffic = [TraceFixture.Traffic(from: -360, to: 0, perMinute: 20, failureRatio: 0.05, sampleRate: 0.3),
                       TraceFixture.Traffic(from: -300, to: -100, perMinute: 7, failureRatio: 0.4, route: "/news")]
        try TraceFixture.write(TraceFixture.events(traffic), to: traces)
        let rule = AlertRule(name: "all", slo: 0.99)
        let ranges = rule.countedRanges(from: now, to: now)
        let plain = WindowedFailureCounter(rules: [rule], ranges: ranges).count(paths: [traces])
        let cachePath = dir.file("c")
        _ = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: cachePath)).count(paths: [traces])
        // Cut the run of the second file's entry short: the store's record still decodes, the run does not.
        let client = "alert-counts 2"
        var stored = try #require(FileCacheStore.decodeAll(Array(try Data(contentsOf: URL(fileURLWithPath: cachePath))), client: client))
        let second = try #require(stored.keys.sorted().dropFirst().first)
        let run = try #require(stored[second]?.sections.keys.first { $0.hasPrefix("runs\u{1}") })
        stored[second]?.sections[run]?.removeLast(3)
        try Data(FileCacheStore.encodeAll(stored, client: client)).write(to: URL(fileURLWithPath: cachePath))

        let damaged = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: cachePath)).count(paths: [traces])
        #expect(damaged.filesFromCache == 4 && damaged.filesOpened == 2)
        let again = WindowedFailureCounter(rules: [rule], ranges: ranges, cache: FileCountCache(path: cachePath)).count(paths: [traces])
        #expect(again.filesFromCache == 5 && again.filesOpened == 1)
        for result in [damaged, again] {
            for start in stride(from: now - 360 * minute, to: now, by: Int(minute / 6)) {
                let bucket = start..<(start + minute / 6)
                #expect(result.counts[0].totals(in: bucket) == plain.counts[0].totals(in: bucket), "bucket at \(start)")
            }
        }
    }
}
