@testable import APITraceFormat
import Foundation
import Testing

/// The one `Retry-After` parser: every value a server can send gives a bounded delay or nil, never a trap.
@Suite struct RetryAfterTests {
    /// 2015-10-21T07:27:00Z, a minute before the RFC's example date.
    let now: Int64 = 1_445_412_420_000
    let cap = Duration.seconds(3600)

    @Test(arguments: [
        ("120", Duration.seconds(120)), (" 0 ", .zero), ("1.5", .milliseconds(1500)), ("0.0001", .zero), ("007", .seconds(7)),
        ("3601", .seconds(3600)), ("99999999999999999999999999999", .seconds(3600)),
        ("Wed, 21 Oct 2015 07:28:00 GMT", .seconds(60)),       // IMF-fixdate
        ("Wednesday, 21-Oct-15 07:28:00 GMT", .seconds(60)),   // RFC 850
        ("Wed Oct 21 07:28:00 2015", .seconds(60)),            // asctime
        ("Wed Oct  1 07:28:00 2015", .zero),                   // a date in the past: no wait
        ("Fri, 21 Oct 2016 07:28:00 GMT", .seconds(3600)),     // a year ahead: capped
    ])
    func validValuesAreReadAndCapped(_ header: String, _ expected: Duration) {
        #expect(RetryAfter.parse(header, nowMilliseconds: now, cap: cap) == expected)
    }

    @Test(arguments: ["inf", "Infinity", "nan", "1e300", "-5", "-0.5", "+3", "soon", "", " ", "1.", ".5", "0x10", "١٢",
                      "Wed, 32 Oct 2015 07:28:00 GMT", "Wed, 21 Foo 2015 07:28:00 GMT", "Wed, 21 Oct 2015 25:28:00 GMT",
                      "Wed, 21 Oct 2015 07:28:00 PST", String(repeating: "9", count: 100)])
    func anythingElseIsIgnored(_ header: String) {
        #expect(RetryAfter.parse(header, nowMilliseconds: now, cap: cap) == nil)
    }

    /// The date arithmetic is checked against Foundation's own reading of the same dates.
    @Test func httpDatesAgreeWithFoundation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let seconds = Int64.random(in: -2_000_000_000...6_000_000_000, using: &generator)
            let text = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(RetryAfter.httpDate(text) == seconds * 1000, "\(text)")
        }
    }
}
