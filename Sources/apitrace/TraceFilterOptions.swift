import APITraceAnalysis
import APITraceFormat
import ArgumentParser

/// The filters `apitrace report` and `apitrace export` share; `--route` and `--host` (and `cat`'s
/// `--route`, `export`'s and `cat`'s `--session`, alert rules' `scope`) are patterns in one grammar.
struct TraceFilterOptions: ParsableArguments {
    @Option(help: "Only events at or after this time: RFC 3339 (2026-11-22T10:00:00Z) or a duration back from now (30m, 2h, 7d).")
    var since: String?

    @Option(help: "Only events before this time: RFC 3339 or a duration back from now.")
    var until: String?

    @Option(help: "Only this route template; \(TextPattern.help).")
    var route: String?

    @Option(help: "Only requests to this server host; \(TextPattern.help).")
    var host: String?

    @Option(help: "Only files whose header app_version is this.")
    var appVersion: String?

    func validate() throws {
        do { _ = try filter() } catch { throw ValidationError("\(error)") }
    }

    /// The filter these options describe.
    func filter() throws -> TraceFilter {
        try TraceFilter(since: since, until: until, route: route, host: host, appVersion: appVersion)
    }
}
