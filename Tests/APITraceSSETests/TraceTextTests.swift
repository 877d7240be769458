@testable import APITraceSSE
import Foundation
import Testing

@Suite("What a server chose is cut before it reaches a trace or a log line")
struct TraceTextTests {
    @Test("a long text is cut on a character boundary, within the bound, and says how many bytes were cut",
          arguments: ["7", "é", "€", "🦊", "a€🦊é"])
    func clip(_ unit: String) {
        let text = String(repeating: unit, count: 5_000)
        for bound in [32, 64, 256, 512] {
            let clipped = TraceText.clip(text, maximumBytes: bound)
            #expect(clipped.utf8.count <= bound)
            #expect(!clipped.contains("\u{FFFD}"))
            let marker = try! #require(clipped.range(of: "…(+"))
            let kept = String(clipped[..<marker.lowerBound])
            #expect(text.hasPrefix(kept) && !kept.isEmpty)
            let cut = Int(clipped[marker.upperBound...].prefix { $0.isNumber }) ?? -1
            #expect(kept.utf8.count + cut == text.utf8.count)
        }
    }

    @Test("a text within the bound is kept as it is", arguments: [0, 1, 255, 256])
    func keep(_ length: Int) {
        let text = String(repeating: "x", count: length)
        #expect(TraceText.clip(text, maximumBytes: 256) == text)
    }
}
