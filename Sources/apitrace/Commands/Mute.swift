import APITraceAlerting
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace mute`: silences pages for a while; muted incidents are still recorded.
    struct Mute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mute",
            abstract: "Mute pages for a while (one rule or all); muted incidents are still recorded. --list shows mutes."
        )

        @Option(name: .customLong("for"), help: ArgumentHelp("How long, e.g. 30m, 2h, 1d.", valueName: "duration"))
        var duration: DurationArgument?

        @Option(help: ArgumentHelp("Mute only this rule (default: every rule).", valueName: "name"))
        var rule: String?

        @Option(help: ArgumentHelp("Mute only this group of a grouped rule (with --rule), as key=value: --group route=/profile; repeat it for a rule grouped by several keys.", valueName: "key=value"))
        var group: [String] = []

        @Option(help: "Why (shown by --list).")
        var comment: String?

        @Option(help: ArgumentHelp("The rules file, to check that --rule names a rule.", valueName: "file"))
        var rules: String?

        @Flag(help: "List the active mutes.")
        var list = false

        @OptionGroup var stateOptions: AlertStateOptions

        @Option(help: ArgumentHelp("Act as if the current time were this RFC 3339 instant (for tests and replays).", valueName: "timestamp"))
        var now: String?

        func validate() throws {
            if list { return }
            guard let duration else { throw ValidationError("Say how long: --for 2h (or --list to see the mutes).") }
            if !group.isEmpty {
                guard rule != nil else { throw ValidationError("--group mutes one group of a rule: give the rule with --rule") }
                if case .failure(let error) = AlertGroup.parse(group) { throw ValidationError(error.message) }
            }
            guard duration.milliseconds > 0 else {
                throw ValidationError("--for: a mute lasts a while, such as 30m, 2h, 1d; found \(duration.defaultValueDescription)")
            }
        }

        func run() async throws {
            let store = StateStore(path: stateOptions.path)
            let now = try self.now.map { try AlertTime.parse($0, option: "--now").timestamp } ?? .now()
            if list {
                let mutes = try store.activeMutes(now: now)
                if mutes.isEmpty { print("no active mutes") }
                for mute in mutes { print(mute.line(now: now)) }
                return
            }
            if let rules, let rule {
                let loaded = try AlertRules.load(path: rules)
                guard let found = loaded.rules.first(where: { $0.name == rule }) else {
                    throw ValidationError("\(rules) has no rule named \(rule) (rules: \(loaded.rules.map(\.name).joined(separator: ", ")))")
                }
                if case .success(let g) = AlertGroup.parse(group), !group.isEmpty, !g.isOther, Set(g.keys) != Set(found.groupBy) {
                    throw ValidationError("rule \(rule) groups by \(found.groupBy.isEmpty ? "nothing" : found.groupBy.map(\.rawValue).joined(separator: ", ")); --group must give exactly those keys")
                }
            }
            let parsed = group.isEmpty ? nil : try? AlertGroup.parse(group).get()
            let mute = try await store.mute(rule: rule, group: parsed, for: AlertDuration(milliseconds: duration!.milliseconds), comment: comment, now: now)
            print("muted \(mute.line(now: now))")
        }
    }
}
