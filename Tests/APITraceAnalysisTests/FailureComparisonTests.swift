import APITraceAnalysis
import APITraceFormat
import Testing

/// The excess-failure ranking on counts small enough to work out by hand (the numbers in the
/// comments), plus its edges. The same definition is checked against Python over real trace
/// files in APITraceCLITests/Report/CompareReportTests.
@Suite("FailureComparison")
struct FailureComparisonTests {
    /// Baseline (app 1): route A 1,000 requests with 10 failures (successes sampled at 0.25), B 1,000 with 20.
    /// Window (app 2): A 500 with 55 failures, B 500 with 10, C (new) 100 with 10 timeouts.
    static func counts() -> FailureComparisonCounts {
        var c = FailureComparisonCounts()
        func add(_ side: FailureComparisonCounts.Side, _ route: String, _ version: String, requests: Int, failures: Int, identity: String, weight: Double = 1) {
            for _ in 0..<failures {
                c.addRequest(side, route: route, host: "h", appVersion: version, weight: 1, failed: true, failureClass: "server_error", identity: identity)
            }
            var left = Double(requests - failures)
            while left >= weight {
                c.addRequest(side, route: route, host: "h", appVersion: version, weight: weight, failed: false, failureClass: "success", identity: "")
                left -= weight
            }
            while left > 0 { c.addRequest(side, route: route, host: "h", appVersion: version, weight: 1, failed: false, failureClass: "success", identity: ""); left -= 1 }
        }
        add(.baseline, "A", "1", requests: 1000, failures: 10, identity: "HTTP 500", weight: 4)
        add(.baseline, "B", "1", requests: 1000, failures: 20, identity: "HTTP 500")
        add(.window, "A", "2", requests: 500, failures: 55, identity: "HTTP 500")
        add(.window, "B", "2", requests: 500, failures: 10, identity: "HTTP 500")
        add(.window, "C", "2", requests: 100, failures: 10, identity: "timeout")
        return c
    }

    static func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-9 }

    @Test("routes: own baseline rate, the overall rate for a new route; shares of the total excess")
    func routes() {
        let r = FailureComparison(Self.counts())
        #expect(Self.close(r.baseline.requests, 2000) && Self.close(r.baseline.failures, 30))
        // 75 − 1,100 × 1.5 % = 58.5
        #expect(Self.close(r.excessFailures, 58.5))
        let routes = r.ranking(.route)
        #expect(routes.rows.map(\.value) == ["A", "C"])          // B: 10 failures, 10 expected
        #expect(Self.close(routes.totalExcess, 58.5))
        #expect(Self.close(routes.rows[0].expectedFailures, 5) && Self.close(routes.rows[0].excessFailures, 50))
        #expect(Self.close(routes.rows[0].share, 50 / 58.5))
        #expect(routes.rows[1].expectation == .overall && Self.close(routes.rows[1].expectedFailures, 1.5))
    }

    @Test("failure dimensions: the baseline's share of all traffic; a new identity is all excess")
    func identities() {
        let rows = FailureComparison(Self.counts()).ranking(.errorIdentity).rows
        // HTTP 500: 65 − 1,100 × 30 / 2,000 = 48.5; timeout: 10 − 0.
        #expect(rows.map(\.value) == ["HTTP 500", "timeout"])
        #expect(Self.close(rows[0].excessFailures, 48.5) && Self.close(rows[1].excessFailures, 10))
        #expect(Self.close(rows[0].share, 48.5 / 58.5))
    }

    @Test("app version on route falls back to the route's baseline; the headline prefers it when it explains as much")
    func headline() throws {
        let r = FailureComparison(Self.counts())
        let combined = try #require(r.ranking(.appVersionRoute).rows.first)
        #expect(combined.value == "2" && combined.route == "A" && combined.expectation == .route)
        #expect(Self.close(combined.expectedFailures, 5))
        #expect(r.ranking(.appVersion).rows.first?.expectation == .overall)
        let headline = try #require(r.headline)
        #expect(headline.label == "A on app 2")
        #expect(headline.sentence == "85% of the extra failures: A on app 2")
    }

    @Test("an empty baseline expects nothing: every failure is excess")
    func emptyBaseline() {
        var c = FailureComparisonCounts()
        c.addRequest(.window, route: "A", host: nil, appVersion: "-", weight: 1, outcome: .serverError, identity: nil, status: 503)
        c.addRequest(.window, route: "A", host: nil, appVersion: "-", weight: 1, outcome: .success, identity: nil, status: 200)
        c.addRequest(.window, route: "A", host: nil, appVersion: "-", weight: 1, outcome: .cancelled, identity: "URLError.cancelled", status: nil)
        c.addDecodeFailure(.window, route: "A", appVersion: "-", decodePath: "App items[*].id")
        let r = FailureComparison(c)
        #expect(!r.baselineHasTraffic)
        #expect(Self.close(r.window.requests, 2) && Self.close(r.window.failures, 2))   // the cancelled request is not counted
        #expect(Self.close(r.excessFailures, 2))
        #expect(r.ranking(.route).rows.first?.expectation == FailureComparison.Expectation.none)
        #expect(r.ranking(.errorIdentity).rows.first?.value == "HTTP 503")
        #expect(r.ranking(.decodePath).rows.first?.value == "App items[*].id")
        #expect(r.ranking(.host).rows.map(\.value) == ["-"])   // decode failures have no host
        #expect(Set(r.ranking(.outcomeClass).rows.map(\.value)) == ["server_error", "decode_failure"])
    }

    @Test("no failures: nothing ranked, no headline")
    func nothingInExcess() {
        var c = FailureComparisonCounts()
        for side in FailureComparisonCounts.Side.allCases {
            c.addRequest(side, route: "A", host: "h", appVersion: "1", weight: 1, outcome: .success, identity: nil, status: 200)
        }
        let r = FailureComparison(c)
        #expect(r.headline == nil && r.excessFailures == 0)
        #expect(r.rankings.allSatisfy { $0.rows.isEmpty })
    }

    @Test("rows are bounded per dimension, and merging parts gives the counts of the whole")
    func boundedAndMergeable() {
        var whole = FailureComparisonCounts(), a = FailureComparisonCounts(), b = FailureComparisonCounts()
        for i in 0..<5000 {
            whole.addRequest(.window, route: "/r/\(i)", host: "h", appVersion: "1", weight: 1, outcome: .serverError, identity: "E\(i)", status: 500)
            if i % 2 == 0 {
                a.addRequest(.window, route: "/r/\(i)", host: "h", appVersion: "1", weight: 1, outcome: .serverError, identity: "E\(i)", status: 500)
            } else {
                b.addRequest(.window, route: "/r/\(i)", host: "h", appVersion: "1", weight: 1, outcome: .serverError, identity: "E\(i)", status: 500)
            }
        }
        #expect(whole.rows(of: .route).count == FailureComparisonCounts.maximumRows)
        #expect(whole.rows(of: .route)[.other]?.window.failures == 4001)
        var merged = a
        merged.merge(b)
        #expect(merged.totals == whole.totals)
        #expect(merged.rows(of: .route).count == FailureComparisonCounts.maximumRows)
        #expect(merged.rows(of: .route).values.reduce(0) { $0 + $1.window.failures } == 5000)
        let r = FailureComparison(merged, limit: 5)
        #expect(r.ranking(.route).rows.count == 5 && r.ranking(.route).rowsOmitted == 995)
    }

    @Test("selectors: a baseline duration is the span before the window; app_version keeps the time range", arguments: [
        ("24h", nil as String?, 1_795_262_400_000 as Int64?, 1_795_348_800_000 as Int64?, nil as String?),
        ("app_version=2.3.1", "app_version=2.4.0", 1_795_348_800_000, nil, "2.3.1"),
        ("2026-11-20T00:00:00Z..2026-11-21T00:00:00Z", nil, 1_795_132_800_000, 1_795_219_200_000, nil),
    ])
    func selectors(_ baseline: String, _ compare: String?, _ since: Int64?, _ until: Int64?, _ version: String?) throws {
        let now = TraceTimestamp(millisecondsSince1970: 1_795_352_400_000)   // 2026-11-22T13:00:00Z
        let report = try TraceFilter(since: "1h", now: now)                  // the window: 12:00 on
        let w = try ComparisonWindows(report: report, compare: compare, baseline: baseline, now: now)
        #expect(w.baseline.since?.millisecondsSince1970 == since)
        #expect(w.baseline.until?.millisecondsSince1970 == until)
        #expect(w.baseline.appVersion == version)
        if compare != nil { #expect(w.window.appVersion == "2.4.0") }
    }
}
