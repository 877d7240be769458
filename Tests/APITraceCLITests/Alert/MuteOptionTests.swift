import APITraceTestSupport
import Foundation
import Testing

/// `apitrace mute --for` takes the one duration grammar as a typed option, refused by the argument
/// parser like every other duration option (`alert --step`), not as text the command checks itself.
@Suite struct MuteOptionTests {
    @Test func muteForIsATypedDurationRefusedLikeTheOtherDurationOptions() async throws {
        let dir = TemporaryDirectory()
        let state = dir.file("state.json")
        let mute = try await apitrace(["mute", "--for", "soon", "--state", state])
        let step = try await apitrace(["alert", "--rules", dir.file("none.yaml"), "--step", "soon", "--state", state])
        #expect(mute.status != 0 && step.status != 0)
        // The parser names the option and its value the same way for both.
        #expect(mute.stderr.contains("The value 'soon' is invalid for '--for <duration>'"), "\(mute.stderr)")
        #expect(step.stderr.contains("The value 'soon' is invalid for '--step <duration>'"), "\(step.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state), "a refused mute writes no state")
    }

    @Test(arguments: ["0s", "0"]) func aZeroMuteIsRefused(_ length: String) async throws {
        let dir = TemporaryDirectory()
        let run = try await apitrace(["mute", "--for", length, "--state", dir.file("state.json")])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--for: a mute lasts a while"), "\(run.stderr)")
    }

    @Test func muteForTakesTheWholeGrammar() async throws {
        let dir = TemporaryDirectory()
        let state = dir.file("state.json")
        let now = "2026-11-25T12:00:00Z"
        let run = try await apitrace(["mute", "--for", "1h30m", "--state", state, "--now", now])
        #expect(run.status == 0, "\(run.stderr)")
        let list = try await apitrace(["mute", "--list", "--state", state, "--now", "2026-11-25T13:29:00Z"])
        #expect(list.stdout.contains("all rules"), "\(list.stdout)")
        let after = try await apitrace(["mute", "--list", "--state", state, "--now", "2026-11-25T13:31:00Z"])
        #expect(after.stdout.contains("no active mutes"), "\(after.stdout)")
    }
}
