import APITraceAlerting
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Which trace files a cron run of `apitrace alert` reads (through ``AlertRunner``, as the command
/// does): every file that can hold events of a rule's windows and baselines, whatever its name says
/// (a live file started long ago, a copied file without a trace name, a file whose modification time
/// lies before its name), and none of the others. The expected files are counted by hand from the
/// names, the modification times and the format's rule that a file ends where its producer's next
/// file starts; each run also shows that what must be read was read: a failure only in such a file
/// decides the page.
@Suite("the files the alert reads")
struct AlertFileSelectionTests {
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000
    let now = TraceFixture.now.millisecondsSince1970

    /// One file named `<started>-<producer>-1.jsonl.gz` (or `name`) holding `events`, modified at `modified`.
    @discardableResult
    func writeFile(_ dir: String, producer: String, started: Int64, events: [TraceEvent], modified: Int64? = nil,
                   name: String? = nil) throws -> String {
        let start = TraceTimestamp(millisecondsSince1970: started)
        let header = TraceFileHeader(producer: producer, app: "Otec", appVersion: "2.1", host: "phone-7", started: start)
        var text = header.jsonLine + "\n"
        for event in events.sorted(by: { $0.timestamp < $1.timestamp }) { text += event.jsonLine + "\n" }
        let path = dir + "/" + (name ?? TraceFileIdentity(started: start, producer: producer, sequence: 1).fileName)
        try Data(try GzipDeflater.compress(Array(text.utf8), level: 5)).write(to: URL(fileURLWithPath: path))
        if let modified {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: Double(modified) / 1000)], ofItemAtPath: path)
        }
        return path
    }

    func requests(from: Int64, to: Int64, every step: Int64, failing: Bool = false) -> [TraceEvent] {
        stride(from: from, to: to, by: Int(step)).map { t in
            TraceEvent(timestamp: .init(millisecondsSince1970: t), session: "s1", .request(.init(
                method: "GET", route: "/apps/{id}", host: "api.example.com", status: failing && (t / step) % 2 == 0 ? 503 : 200, durationMs: 42)))
        }
    }

    func decodeFailures(at times: [Int64]) -> [TraceEvent] {
        times.enumerated().map { i, t in
            TraceEvent(timestamp: .init(millisecondsSince1970: t), session: "s\(i)", .decodeFailure(.init(
                route: "/apps", entity: "App", kind: .keyNotFound, path: "data.apps[\(i)].logo", key: "logo", message: "missing")))
        }
    }

    func run(_ dir: TemporaryDirectory, rules yaml: String) async throws -> AlertRunner.Outcome {
        let rules = try AlertRules.parse(yaml, file: "rules.yaml")
        var options = AlertRunner.Options(traceDirectory: dir.file("traces"), statePath: dir.file("state.json"))
        options.now = TraceFixture.now
        return await AlertRunner(rules: rules, options: options).run()
    }

    func traces(_ dir: TemporaryDirectory) throws -> String {
        try FileManager.default.createDirectory(atPath: dir.file("traces"), withIntermediateDirectories: true)
        return dir.file("traces")
    }

    @Test("an SLO rule reads the files of its longest window, a live file started long ago, a copied file, and a file with a skewed clock")
    func sloRule() async throws {
        let dir = TemporaryDirectory()
        let traces = try traces(dir)
        // 24 hourly files of quiet traffic: the longest window (6 h) needs the 6 files from 06:00 and the one
        // from 05:00, which holds events until 06:00 (2 minutes' slack).
        try TraceFixture.write(TraceFixture.events([.init(from: -24 * 60, to: 0, perMinute: 2, failureRatio: 0)]), to: traces, producer: "hourly")
        // A live file named 20 hours ago, still written to: the only failures are in its last 15 minutes.
        try writeFile(traces, producer: "live", started: now - 20 * Self.hour,
                      events: requests(from: now - 20 * Self.hour, to: now - 15 * Self.minute, every: 10 * Self.minute)
                          + requests(from: now - 15 * Self.minute, to: now, every: 3_000, failing: true))
        // A producer's last file, modified 9 hours ago: it ends then, before every window. Not read.
        try writeFile(traces, producer: "stale", started: now - 10 * Self.hour,
                      events: requests(from: now - 10 * Self.hour, to: now - 9 * Self.hour, every: Self.minute), modified: now - 9 * Self.hour)
        // Modified before its name's start (a skewed clock, a copy): the time cannot be trusted, so it is read.
        try writeFile(traces, producer: "skewed", started: now - 8 * Self.hour,
                      events: requests(from: now - 8 * Self.hour, to: now - 7 * Self.hour, every: Self.minute), modified: now - 30 * Self.hour)
        // A file without a trace file name is always read.
        try writeFile(traces, producer: "copied", started: now - Self.hour,
                      events: requests(from: now - Self.hour, to: now, every: Self.minute), name: "copied.jsonl.gz")

        let outcome = try await run(dir, rules: "rules:\n  - {name: api, slo: 0.99}\n")
        #expect(outcome.problems.isEmpty, "\(outcome.problems)")
        #expect(outcome.filesFound == 28)
        #expect(outcome.filesOpened + outcome.filesFromCache == 7 + 3)
        // Only the live file fails (half of 20 a minute against 3 a minute of others): it was read.
        #expect(outcome.transitions["api"] == .triggered)

        // The next run (a minute later in the cron) reads the same files, the finished ones from the count cache.
        let again = try await run(dir, rules: "rules:\n  - {name: api, slo: 0.99}\n")
        #expect(again.filesFound == 28)
        #expect(again.filesOpened + again.filesFromCache == 10)
        #expect(again.filesFromCache == 6, "the 6 finished hourly files in the windows")
    }

    @Test("a spike rule against the same hour last week reads the files of its window and of that hour, none between")
    func spikeBaseline() async throws {
        let dir = TemporaryDirectory()
        let traces = try traces(dir)
        // 8 days of hourly files (192). The window is 11:30–12:00 today (the file from 11:00); the baseline is
        // 11:30–12:30 a week ago (the files from 11:00 and 12:00 that day).
        try TraceFixture.write(TraceFixture.events([.init(from: -8 * 24 * 60, to: 0, perMinute: 1, failureRatio: 0)]), to: traces, producer: "hourly")
        let outcome = try await run(dir, rules: """
            rules:
              - name: spike
                spike: {window: 30m, baseline: same_hour_of_week, factor: 3, min_increase: 0.02}
            """)
        #expect(outcome.problems.isEmpty, "\(outcome.problems)")
        #expect(outcome.filesFound == 192)
        #expect(outcome.filesOpened + outcome.filesFromCache == 3)
    }

    @Test("new_failures reads a baseline file named before the baseline that its producer wrote into since; a file that ended before it is not needed",
          arguments: [(lastSeenDaysAgo: Int64(3), page: IncidentTracker.Transition.quiet), (lastSeenDaysAgo: 8, page: .triggered)])
    func newFailuresBaseline(lastSeenDaysAgo: Int64, page: IncidentTracker.Transition) async throws {
        // A file named 9 days ago saw the failure group, and was last written to, `lastSeenDaysAgo` days ago.
        // 3 days: inside the 7-day baseline, so the file is read and the failure known: no page.
        // 8 days (the control): before the baseline, so the failure is new.
        let dir = TemporaryDirectory()
        let traces = try traces(dir)
        let lastSeen = now - lastSeenDaysAgo * Self.day
        try writeFile(traces, producer: "old", started: now - 9 * Self.day,
                      events: decodeFailures(at: [lastSeen, lastSeen + Self.minute]), modified: lastSeen + 2 * Self.minute)
        // The same group in the last half hour, in a file of its own producer.
        try writeFile(traces, producer: "new", started: now - Self.hour, events: decodeFailures(at: (1...5).map { now - Int64($0) * 5 * Self.minute }))
        let outcome = try await run(dir, rules: """
            rules:
              - name: new
                new_failures: {baseline: 7d, window: 1h, min_count: 1, min_sessions: 1, min_session_share: 0}
            """)
        #expect(outcome.problems.isEmpty, "\(outcome.problems)")
        #expect(outcome.transitions["new"] == page)
    }
}
