import APITraceAlerting
import APITraceAnalysis
import APITraceFormat
import ArgumentParser
import Foundation
import OtecNewsClient

/// `apitrace-demo`: the whole apitrace loop in one command.
@main
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apitrace-demo",
        abstract: "Run the sample news API with faults and the instrumented sample client against it, then report what the traces show."
    )

    @Option(help: "Seconds the client browses.")
    var duration = 20

    @Flag(help: "A short run (6 seconds), as CI uses.")
    var short = false

    @Option(help: "Folder for the traces (default: a new temporary folder).")
    var traceDir: String?

    func validate() throws {
        guard duration > 0 else { throw ValidationError("--duration must be at least 1 second") }
    }

    func run() async throws {
        let seconds = short ? 6 : duration
        let dir = traceDir ?? NSTemporaryDirectory() + "apitrace-demo-\(UUID().uuidString.prefix(8))"
        print("apitrace demo: sample API with faults on 127.0.0.1, instrumented client browsing for \(seconds) s, traces in \(dir)")
        let outcome = try await DemoScenario(duration: .seconds(seconds), traceDirectory: dir).run()
        print("client: \(outcome.requests) requests, \(outcome.failures) failed, \(outcome.newsReceived) live news received\n")

        // What `apitrace report DIR` prints.
        let summary = TraceSummarizer(filter: TraceFilter()).summarize(paths: [dir])
        let report = TraceReport(summary: summary, options: .init(sources: [dir]))
        print(report.render(.text, colors: isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil))

        // What `apitrace alert DIR --rules rules.yaml --dry-run` would page with the minimal rules.
        print("ALERT (dry run of the minimal rules file: 99% SLO, multi-window burn rate, PagerDuty)")
        let rules = try AlertRules.parse(Self.rules, file: "demo-rules.yaml")
        var options = AlertRunner.Options(traceDirectory: dir, statePath: dir + "/.alert-state.json")
        options.dryRun = true
        options.environment = ["PD_ROUTING_KEY": "demo-routing-key"]
        let alert = await AlertRunner(rules: rules, options: options).run()
        for line in alert.lines + alert.problems { print("  " + line) }
        if alert.lines.isEmpty { print("  nothing would page") }
        print("\nRe-run the report with: swift run apitrace report \(dir)")
    }

    /// The rules file of the alerting issue, as a user would start with it.
    static let rules = """
        rules:
          - name: api-errors
            slo: 0.99
            notify: [oncall]
        notifiers:
          oncall:
            type: pagerduty
            routing_key_env: PD_ROUTING_KEY
            url: https://events.pagerduty.com/v2/enqueue
        """
}
