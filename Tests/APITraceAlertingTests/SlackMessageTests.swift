@testable import APITraceAlerting
import Foundation
import Testing

@Suite struct SlackMessageTests {
    @Test func aSlackSectionIsCutWithinItsLimitWithoutBreakingAnEscape() {
        let raw = String(repeating: "ab<", count: 2000)
        let fitted = SlackMessage.fitted(SlackMessage.escaped(raw))
        #expect(fitted.count <= SlackMessage.blockTextLimit && fitted.hasSuffix("…"))
        let body = fitted.dropLast()
        #expect(!body.contains("<"))
        // Every `&` still starts a whole entity.
        #expect(body.components(separatedBy: "&").dropFirst().allSatisfy { $0.hasPrefix("lt;") })
    }
}
