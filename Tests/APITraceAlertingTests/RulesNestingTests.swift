@testable import APITraceAlerting
import Foundation
import Testing

/// Rules files nested thousands deep overflowed Yams' recursive composer (a segfault of every
/// command that reads the rules); the depth is now checked first, for every YAML style.
@Suite("Rules file nesting")
struct RulesNestingTests {
    static let depth = 5_000

    /// Deep documents of each style that reaches depth: flow sequences and mappings, compact block
    /// sequences, indentation, complex keys, and mixtures, each in a place the parser reaches.
    static let deep: [(String, String)] = [
        ("flow sequences", "rules: " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "\n"),
        ("flow mappings", "rules: " + String(repeating: "{a: ", count: depth) + "1" + String(repeating: "}", count: depth) + "\n"),
        ("unclosed flow", "rules: " + String(repeating: "[", count: depth) + "\n"),
        ("compact block sequences", "rules:\n" + String(repeating: "- ", count: depth) + "x\n"),
        ("indented mappings", (0..<depth).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n") + " 1\n"),
        ("complex keys", "rules:\n" + String(repeating: "? ", count: depth) + "x\n"),
        ("anchored flow", "rules: " + (0..<depth).map { "&a\($0) [" }.joined() + String(repeating: "]", count: depth) + "\n"),
        ("tagged flow", "rules: " + String(repeating: "!!seq [", count: depth) + String(repeating: "]", count: depth) + "\n"),
        ("block then flow", "rules:\n" + String(repeating: "- ", count: depth / 2) + String(repeating: "[{a: ", count: depth / 2) + "1" + String(repeating: "}]", count: depth / 2) + "\n"),
        ("in a second document", "rules: []\n---\n" + String(repeating: "[", count: depth) + "\n"),
        // Each anchor 60 deep and holding an alias to the one before: no run of events nests past
        // 61, but the composed tree is 3,000 × 60 deep (it overflowed the stack when freed).
        ("a chain of aliases", (0..<3000).map { i in
            "x\(i): &x\(i) " + String(repeating: "[", count: 60) + (i == 0 ? "1" : "*x\(i - 1)") + String(repeating: "]", count: 60)
        }.joined(separator: "\n") + "\nrules: *x2999\n"),
    ]

    @Test("every style of deep nesting is refused with a clear error naming the line", arguments: 0..<deep.count)
    func deepNesting(index: Int) {
        let (label, text) = Self.deep[index]
        do {
            _ = try AlertRules.parse(text, file: "deep.yaml")
            Issue.record("\(label): parsed")
        } catch {
            #expect(error.file == "deep.yaml" && error.line != nil && error.message.contains("nested more than 64 levels"), "\(label): \(error)")
        }
    }

    @Test("nesting at the limit is still parsed (and then judged as rules)")
    func atTheLimit() {
        let text = "rules: " + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "\n"
        #expect(YAMLNestingCheck.firstTooDeep(text) == nil)
        #expect(YAMLNestingCheck.firstTooDeep("rules: " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "\n") != nil)
    }

    @Test("billion laughs still costs nothing: aliases are not expanded")
    func billionLaughs() {
        var text = "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        for i in 1...9 { text += "a\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 9).joined(separator: ",") + "]\n" }
        text += "rules: *a9\nnotifiers: {}\n"
        let start = ContinuousClock.now
        #expect(throws: AlertConfigError.self) { try AlertRules.parse(text, file: "laughs.yaml") }
        #expect(ContinuousClock.now - start < .seconds(20))
    }
}
