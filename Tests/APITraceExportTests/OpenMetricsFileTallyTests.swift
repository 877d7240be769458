import APITraceExport
import APITraceFormat
import Foundation
import Testing

/// A file's tally (series found by their label bytes in an open-addressing table) must count
/// exactly what the exporter counts line by line, however many series a file holds.
@Suite("OpenMetrics file tally")
struct OpenMetricsFileTallyTests {
    /// Lines of every counted type; `distinct` request series (route x status), each seen several times.
    static func lines(distinct: Int) -> [String] {
        var out: [String] = []
        for round in 0..<3 {
            for i in 0..<distinct {
                let status = [200, 404, 503][(i + round) % 3]
                let rate = status == 200 && i % 4 == 0 ? #","sample_rate":0.5"# : ""
                out.append(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/r/\#(i)/\#(String(repeating: "x", count: i % 23))","host":"h\#(i % 7)","status":\#(status),"duration_ms":\#(i % 9000)\#(rate)}"#)
                if i % 50 == 0 {
                    out.append(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"POST","route":"/r/\#(i)","duration_ms":12,"error":"URLError.cancelled"}"#)
                    out.append(#"{"type":"error","ts":"2026-11-22T10:00:01.000Z","identity":"E\#(i % 1300)","suppressed":\#(i % 5)}"#)
                    out.append(#"{"type":"decode_failure","ts":"2026-11-22T10:00:01.000Z","route":"/r","entity":"App","kind":"keyNotFound","path":"data[\#(i)].x"}"#)
                    out.append(#"{"type":"sse","ts":"2026-11-22T10:00:01.000Z","phase":"close","route":"/s\#(i % 3)","reason":"r\#(i % 4)"}"#)
                    out.append(#"{"type":"websocket","ts":"2026-11-22T10:00:01.000Z","phase":"close","route":"/w","code":\#(1000 + i % 12)}"#)
                    out.append(#"{"type":"dropped","ts":"2026-11-22T10:00:01.000Z","count":\#(i),"reason":"full"}"#)
                }
            }
        }
        return out
    }

    // With bounds that bite, a tally and a line-by-line count may admit different routes into their
    // own series (a tally adds its requests, then the other types); unbounded, they must agree exactly.
    /// Reads `line` with the full scanner and, when it is an event, counts it both ways: into the
    /// tally and line by line into an exporter. True when it was counted.
    static func count(
        _ line: String, _ scanner: inout TraceRecordScanner, into tally: inout OpenMetricsExporter.FileTally,
        and lineByLine: inout OpenMetricsExporter, appVersion: String
    ) -> Bool {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { raw in
            guard scanner.scan(UnsafeRawBufferPointer(raw)) == .event else { return false }
            tally.add(scanner.record)
            lineByLine.add(scanner.record, appVersion: appVersion)
            return true
        }
    }

    @Test("a tally counts what the exporter counts line by line, with thousands of series")
    func tallyEqualsLineByLine() {
        let limits = OpenMetricsExporter.Limits(routes: 100_000, identities: 100_000, seriesPerFamily: 1_000_000)
        var tally = OpenMetricsExporter.FileTally(limits: limits)
        let header = TraceFileHeader(producer: "p", appVersion: "1.2", started: TraceTimestamp(millisecondsSince1970: 1_795_341_600_000))
        tally.begin(header: header)
        var lineByLine = OpenMetricsExporter(limits: limits)
        var scanner = TraceRecordScanner()
        var counted = 0
        for line in Self.lines(distinct: 6_000) where Self.count(line, &scanner, into: &tally, and: &lineByLine, appVersion: "1.2") {
            counted += 1
        }
        var fromTally = OpenMetricsExporter(limits: limits)
        fromTally.add(tally)
        #expect(counted > 18_000)
        let expected = lineByLine.text()
        let got = fromTally.text()
        let gotLines = Set(got.split(separator: "\n")), expectedLines = Set(expected.split(separator: "\n"))
        #expect(got == expected, "only in the tally's: \(gotLines.subtracting(expectedLines).sorted().prefix(8)); only line by line: \(expectedLines.subtracting(gotLines).sorted().prefix(8))")
        #expect(expected.contains(#"url_template="/r/5999/"#))
    }

    // The request key is written on the stack for ordinary labels and on the heap past that
    // (withUnsafeTemporaryAllocation); absent and empty labels must stay apart in it. Durations are
    // multiples of 1/8 s, exact in binary: an empty and an absent host are one exported series summed
    // in another order by the tally, and other durations would differ in their last digit.
    @Test("labels of every length, empty and absent, interleaved: the tally counts what line by line counts")
    func longEmptyAndAbsentLabels() {
        let limits = OpenMetricsExporter.Limits(routes: 100_000, identities: 100_000, seriesPerFamily: 1_000_000)
        var tally = OpenMetricsExporter.FileTally(limits: limits)
        var lineByLine = OpenMetricsExporter(limits: limits)
        var scanner = TraceRecordScanner()
        let hosts = [#","host":"h""#, #","host":"""#, ""]
        let errors = [#","error":"URLError.timedOut""#, #","error":"""#, ""]
        var counted = 0
        for round in 0..<2 {
            for length in [0, 1, 7, 8, 9, 500, 1_100, 5_000] {
                for (h, host) in hosts.enumerated() {
                    for (e, error) in errors.enumerated() {
                        let status = e == 2 ? #","status":\#(200 + h + round)"# : ""
                        let line = #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/\#(String(repeating: "r", count: length))""#
                            + host + error + status + #","duration_ms":\#(length % 8 * 125)}"#
                        if Self.count(line, &scanner, into: &tally, and: &lineByLine, appVersion: "") { counted += 1 }
                    }
                }
            }
        }
        #expect(counted == 2 * 8 * 9)
        var fromTally = OpenMetricsExporter(limits: limits)
        fromTally.add(tally)
        #expect(fromTally.text() == lineByLine.text())
        #expect(lineByLine.text().contains(String(repeating: "r", count: 5_000)))
    }
}
