import APITraceAlerting
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace alert`: evaluates alert rules over the trace folder and pages; made for cron.
    struct Alert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "alert",
            abstract: "Evaluate alert rules over traces and page on error-rate spikes (run it every minute from cron).",
            discussion: """
                Exit status: 0 evaluated and every due notification delivered; 1 a delivery failed or was refused \
                (kept in the state and retried next run); 2 invalid rules file or unset secret variable; \
                3 state file unreadable or unwritable; 4 another run held the state lock for --lock-timeout; \
                64 bad command line. See Docs/alerting.md.
                """
        )

        @Argument(help: "Trace folder (default: $APITRACE_DIR or the default trace folder).")
        var traceDirectory: String?

        @Option(help: ArgumentHelp("The rules file (YAML or JSON).", valueName: "file"))
        var rules: String

        @OptionGroup var stateOptions: AlertStateOptions

        @Option(help: ArgumentHelp("Evaluate as if the current time were this RFC 3339 instant.", valueName: "timestamp"))
        var now: String?

        @Flag(help: "Print what would be sent (secrets redacted) without sending or changing the state.")
        var dryRun = false

        @Flag(help: "Only validate the rules file; errors name the line and field.")
        var checkConfig = false

        @Flag(help: "Print when the rules would have paged over past traces (with --since and --until).")
        var backtest = false

        @Option(help: ArgumentHelp("Backtest start: RFC 3339, or a duration back from now (7d).", valueName: "time"))
        var since: String?

        @Option(help: ArgumentHelp("Backtest end: RFC 3339, or a duration back from now (default now).", valueName: "time"))
        var until: String?

        @Option(help: ArgumentHelp("Backtest evaluation interval.", valueName: "duration"))
        var step = DurationArgument("1m")

        @Option(help: ArgumentHelp("How long to wait for an overlapping run's lock.", valueName: "duration"))
        var lockTimeout = DurationArgument("50s")

        @Option(help: ArgumentHelp("The longest a run goes on delivering, from its start; what did not finish is kept for the next run.", valueName: "duration"))
        var budget = DurationArgument("45s")

        @Flag(help: "Print a line per rule even when nothing changed.")
        var verbose = false

        func validate() throws {
            if backtest, since == nil { throw ValidationError("--backtest needs --since (and optionally --until).") }
            if !backtest, since != nil || until != nil { throw ValidationError("--since and --until go with --backtest.") }
            if step.milliseconds <= 0 { throw ValidationError("--step must be above 0.") }
            if budget.milliseconds <= 0 { throw ValidationError("--budget must be above 0.") }
        }

        func run() async throws {
            let stderr = FileHandle.standardError
            let loaded: AlertRules
            do {
                loaded = try AlertRules.load(path: rules)
            } catch {
                stderr.write(Data("apitrace alert: \(error)\n".utf8))
                throw ExitCode(AlertRunner.ExitStatus.configurationError.rawValue)
            }
            if checkConfig {
                print("\(rules): \(loaded.rules.count) rule\(loaded.rules.count == 1 ? "" : "s") (\(loaded.rules.map(\.name).joined(separator: ", "))), \(loaded.notifiers.count) notifier\(loaded.notifiers.count == 1 ? "" : "s"): OK\(loaded.configurationWarnings.isEmpty ? "" : ", \(loaded.configurationWarnings.count) warning\(loaded.configurationWarnings.count == 1 ? "" : "s")")")
                for missing in loaded.missingSecrets(in: ProcessInfo.processInfo.environment) {
                    print("note: notifier \(missing.notifier) reads \(missing.variable), which is not set in this environment")
                }
                for warning in loaded.configurationWarnings { stderr.write(Data("apitrace alert: warning: \(rules): \(warning)\n".utf8)) }
                return
            }
            let directory = traceDirectory ?? TraceDirectory.default
            if backtest { return try runBacktest(loaded, directory: directory) }
            var options = AlertRunner.Options(traceDirectory: directory, statePath: stateOptions.path)
            if let now { options.now = try AlertTime.parse(now, option: "--now").timestamp }
            options.dryRun = dryRun
            options.verbose = verbose
            options.lockTimeout = lockTimeout.duration
            options.budget = budget.duration
            let outcome = await AlertRunner(rules: loaded, options: options).run()
            for line in outcome.lines { print(line) }
            for problem in outcome.problems { stderr.write(Data("apitrace alert: \(problem)\n".utf8)) }
            if outcome.status != .ok { throw ExitCode(outcome.status.rawValue) }
        }

        private func runBacktest(_ loaded: AlertRules, directory: String) throws {
            let start = try AlertTime.parse(since!, option: "--since").timestamp
            let end = try until.map { try AlertTime.parse($0, option: "--until").timestamp } ?? .now()
            guard start <= end else { throw ValidationError("--since must not be after --until") }
            let result = Backtest(rules: loaded, since: start, until: end, step: AlertDuration(milliseconds: step.milliseconds)).run(paths: [directory])
            for event in result.events { print(event.line) }
            for rule in loaded.rules {
                print(result.summaryLine(rule: rule.name))
                for line in result.groupLines(rule: rule.name) { print(line) }
            }
            for note in result.groupNotes { FileHandle.standardError.write(Data("apitrace alert: warning: \(note)\n".utf8)) }
            for warning in result.warnings { FileHandle.standardError.write(Data("apitrace alert: warning: \(warning)\n".utf8)) }
        }
    }
}
