import APITraceTestSupport
import APITraceFormat
import Foundation
import Testing

/// `apitrace alert --backtest` over files whose timestamps claim decades, run as a child under an
/// address-space limit: it must neither die nor run past its budget.
@Suite struct BacktestBoundsTests {
    /// A gzip trace file of `producer` named after `started`, holding `events`.
    static func write(_ events: [TraceEvent], producer: String, started: TraceTimestamp, sequence: Int, to folder: String) throws {
        let header = TraceFileHeader(producer: producer, app: "Otec", appVersion: "2.1", host: "phone-7", started: started)
        let text = header.jsonLine + "\n" + events.map { $0.jsonLine + "\n" }.joined()
        let path = folder + "/" + TraceFileIdentity(started: started, producer: producer, sequence: sequence).fileName
        try Data(try GzipDeflater.compress(Array(text.utf8), level: 5)).write(to: URL(fileURLWithPath: path))
    }

    static func failure(at rfc3339: String) -> TraceEvent {
        TraceEvent(timestamp: TraceTimestamp(rfc3339: rfc3339)!, session: "s1", .request(.init(method: "GET", route: "/apps/{id}", host: "api.example.com", status: 503, durationMs: 42)))
    }

    @Test("events in 1970 and 9999 (in a file named 2026, and in a finished file named 1970) under a 1 GB address space: the backtest ends, pages the real spike once")
    func decadesOfClaimedSpan() async throws {
        let dir = TemporaryDirectory()
        let folder = dir.file("traces")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TraceFixture.write(TraceFixture.events([
            .init(from: -360, to: -30, perMinute: 30, failureRatio: 0.005),
            .init(from: -30, to: 0, perMinute: 30, failureRatio: 0.4),
            .init(from: 0, to: 40, perMinute: 30, failureRatio: 0.005),
        ]), to: folder)
        let strays = ["1970-01-01T00:00:01.000Z", "1970-01-01T00:05:00.000Z", "9999-12-31T23:59:59.000Z"].map(Self.failure)
        try Self.write(strays, producer: "stray", started: TraceFixture.at(minutes: -120), sequence: 1, to: folder)
        // A finished file whose name claims 1970 up to its successor's start in 2026.
        try Self.write(strays, producer: "old", started: TraceTimestamp(rfc3339: "1970-01-01T00:00:00Z")!, sequence: 1, to: folder)
        try Self.write([Self.failure(at: TraceFixture.at(minutes: -100).rfc3339)], producer: "old", started: TraceFixture.at(minutes: -100), sequence: 2, to: folder)
        let rules = try TraceFixture.rules("rules:\n  - name: api-errors\n    slo: 0.99\n", in: dir)

        let started = Date()
        let run = try await runChild("/usr/bin/prlimit", [
            "--as=1000000000", try builtProduct("apitrace").path, "alert", folder, "--rules", rules, "--backtest",
            "--since", "1970-01-01T00:00:00Z", "--until", TraceFixture.at(minutes: 40).rfc3339,
        ], environment: ["APITRACE_CACHE_DIR": testReportCacheDirectory])
        let seconds = Date().timeIntervalSince(started)
        // On main the child aborted on a 1.4 GB allocation (56 years of 10 s buckets).
        #expect(run.status == 0, "\(run.stderr.suffix(2000))")
        // A budget, not a speed target: 29 million evaluations, all but a few hours of them empty.
        #expect(seconds < 120)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let pages = lines.filter { $0.contains(" PAGE ") }
        #expect(pages.count == 1, "\(run.stdout)")
        let page = try #require(pages.first.flatMap { TraceTimestamp(rfc3339: String($0.prefix(24))) })
        #expect(page >= TraceFixture.at(minutes: -30) && page <= TraceFixture.at(minutes: -25), "\(run.stdout)")
        let evaluations = (TraceFixture.at(minutes: 40).millisecondsSince1970) / 60_000 + 1
        #expect(lines.last?.contains("of \(evaluations) evaluations") == true, "\(lines.last ?? "")")
    }
}
