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
}
