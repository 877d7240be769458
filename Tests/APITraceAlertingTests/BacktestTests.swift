import APITraceTestSupport
import APITraceAlerting
import APITraceFormat
import Foundation
import Testing

/// The backtest replays in passes: what it finds must not depend on the passes, and time with
/// no trace file is leapt over, its evaluations counted.
@Suite struct BacktestTests {
    static let rulesText = """
        rules:
          - name: api-errors
            slo: 0.99
          - name: api-spike
            spike:
              window: 30m
              baseline: trailing_day
              factor: 3
        """

    /// Six calm hours, a 30-minute spike ending at `now`, 40 calm minutes; a second spike two days later.
    static func traces(in dir: TemporaryDirectory) throws -> String {
        let folder = dir.file("traces")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TraceFixture.write(TraceFixture.events([
            .init(from: -360, to: -30, perMinute: 30, failureRatio: 0.005),
            .init(from: -30, to: 0, perMinute: 30, failureRatio: 0.4),
            .init(from: 0, to: 40, perMinute: 30, failureRatio: 0.005),
            .init(from: 2 * 1440, to: 2 * 1440 + 60, perMinute: 30, failureRatio: 0.005),
            .init(from: 2 * 1440 + 60, to: 2 * 1440 + 90, perMinute: 30, failureRatio: 0.5),
            .init(from: 2 * 1440 + 90, to: 2 * 1440 + 120, perMinute: 30, failureRatio: 0.005),
        ]), to: folder)
        return folder
    }

    @Test("passes of 2 hours and of 9 hours find what one pass over the whole backtest finds", arguments: [7_200_000, 32_400_000] as [Int64])
    func passesDoNotChangeTheFindings(passMilliseconds: Int64) async throws {
        let dir = TemporaryDirectory()
        let folder = try Self.traces(in: dir)
        let rules = try AlertRules.parse(Self.rulesText)
        let backtest = Backtest(rules: rules, since: TraceFixture.at(minutes: -400), until: TraceFixture.at(minutes: 3 * 1440))
        let (whole, passes) = try await offPool {
            (backtest.run(paths: [folder], passMilliseconds: .max / 4), backtest.run(paths: [folder], passMilliseconds: passMilliseconds))
        }
        #expect(whole.events.filter { $0.transition == .triggered }.count >= 2, "the fixture must page: \(whole.events.map(\.line))")
        #expect(passes.events == whole.events)
        #expect(passes.firingEvaluations == whole.firingEvaluations)
        #expect(passes.evaluations == whole.evaluations && whole.evaluations == 400 + 3 * 1440 + 1)
        #expect(passes.filesOpened == whole.filesOpened)
    }

    @Test("a backtest from 1970 leaps over the empty decades: the same pages as one from the traffic's start, every minute counted")
    func emptyTimeIsLeaptOver() async throws {
        let dir = TemporaryDirectory()
        let folder = try Self.traces(in: dir)
        let rules = try AlertRules.parse(Self.rulesText)
        let since = TraceTimestamp(rfc3339: "1970-01-01T00:00:00Z")!, until = TraceFixture.at(minutes: 3 * 1440)
        let (far, near) = try await offPool {
            (Backtest(rules: rules, since: since, until: until).run(paths: [folder]),
             Backtest(rules: rules, since: TraceFixture.at(minutes: -400), until: until).run(paths: [folder]))
        }
        #expect(far.events == near.events)
        #expect(far.firingEvaluations == near.firingEvaluations)
        #expect(far.evaluations == Int((until.millisecondsSince1970 - since.millisecondsSince1970) / 60_000) + 1)
    }
}
