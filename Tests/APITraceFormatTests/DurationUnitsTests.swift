import APITraceFormat
import Testing

@Suite struct DurationUnitsTests {
    @Test func conversionsAreExactForWholeUnitsAndSaturate() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.microseconds(2500).inMilliseconds == 2.5)
        #expect(Duration.milliseconds(-1500).wholeMilliseconds == -1500)
        #expect(Duration.nanoseconds(1_999_999).wholeMilliseconds == 1)
        #expect(Duration.seconds(Int64.max).wholeMilliseconds == Int64.max / 2)
        #expect(Duration.seconds(Int64.min + 1).wholeMilliseconds == -Int64.max / 2)
        // Two saturated values still add without trapping.
        #expect(Duration.seconds(Int64.max).wholeMilliseconds &+ Duration.seconds(Int64.max).wholeMilliseconds > 0)
    }

    @Test("milliseconds are the same on both sides of 2^64 attoseconds (about 18.45 s), where the fast path stops, and below zero")
    func millisecondsAcrossTheWordBoundary() {
        // Expected values written out by hand.
        #expect(Duration.nanoseconds(1).inMilliseconds == 0.000001)
        #expect((Duration.seconds(18) + .milliseconds(446)).inMilliseconds == 18_446)
        #expect((Duration.seconds(18) + .milliseconds(447)).inMilliseconds == 18_447)
        #expect(Duration.seconds(19).inMilliseconds == 19_000)
        #expect(Duration.seconds(3600).inMilliseconds == 3_600_000)
        #expect(Duration.milliseconds(-250).inMilliseconds == -250)
        #expect(Duration.seconds(-19).inMilliseconds == -19_000)
    }
}
