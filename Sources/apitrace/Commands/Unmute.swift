import APITraceAlerting
import APITraceFormat
import ArgumentParser
import Foundation

extension APITrace {
    /// `apitrace unmute`: ends mutes.
    struct Unmute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unmute", abstract: "End mutes: one rule's, one by id, or all.")

        @Option(help: ArgumentHelp("End the mutes of this rule.", valueName: "name"))
        var rule: String?

        @Option(help: ArgumentHelp("End the mute with this id (from mute --list).", valueName: "id"))
        var id: String?

        @OptionGroup var stateOptions: AlertStateOptions

        @Option(help: ArgumentHelp("Act as if the current time were this RFC 3339 instant (for tests and replays).", valueName: "timestamp"))
        var now: String?

        func run() async throws {
            let now = try self.now.map { try AlertTime.parse($0, option: "--now").timestamp } ?? .now()
            let removed = try await StateStore(path: stateOptions.path).unmute(rule: rule, id: id, now: now)
            if removed.isEmpty { print("no matching mute") }
            for mute in removed { print("unmuted \(mute.line(now: now))") }
        }
    }
}
