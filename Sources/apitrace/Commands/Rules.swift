import APITraceAlerting
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace rules`: alert rules translated for another engine.
    struct Rules: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rules",
            abstract: "Translate apitrace alert rules into Prometheus recording and alerting rules.",
            discussion: """
                prometheus: one rule group per rule, over the metrics of `apitrace export --format prometheus` \
                and the collector's /metrics, with the thresholds, windows, min_requests, confidence, recent \
                window and outcome classes of `apitrace alert`. Load the output with Prometheus' rule_files and \
                route the alerts with Alertmanager (labels severity, apitrace_rule, apitrace_notify). \
                What cannot be translated exactly is printed as a note on standard error. Check with \
                `promtool check rules`.
                Exit status: 0 on success, 1 when the output cannot be written, 2 for an invalid rules file, 64 for bad arguments.
                """
        )

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case prometheus
        }

        @Option(help: "prometheus.")
        var format: Format

        @Option(help: ArgumentHelp("The rules file (YAML or JSON).", valueName: "file"))
        var rules: String

        @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
        var output: String?

        func run() throws {
            let loaded: AlertRules
            do { loaded = try AlertRules.load(path: rules) } catch {
                FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                throw ExitCode(2)
            }
            let translation = PrometheusRuleTranslation(loaded)
            for note in translation.notes { FileHandle.standardError.write(Data("apitrace: note: \(note)\n".utf8)) }
            let data = Data(translation.yaml.utf8)
            if let output {
                do { try AtomicFileWriter.write(data, to: output, permissions: 0o666) } catch {
                    FileHandle.standardError.write(Data("apitrace: \(error)\n".utf8))
                    throw ExitCode(1)
                }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }
    }
}
