@testable import APITraceAnalysis
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("Report formats")
struct TraceReportFormatTests {
    static let report: TraceReport = {
        let traces = try! GeneratedTraces(events: 5000, files: 2, seed: 77)
        return TraceReport(summary: TraceSummarizer().summarize(files: traces.paths), options: .init(sources: [traces.folder.path]))
    }()

    @Test("JSON parses, carries the schema version, and its numbers are numbers that match the report")
    func json() throws {
        let report = Self.report
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.render(.json).utf8)) as? [String: Any])
        #expect(object["schema"] as? String == "apitrace.report/1")
        let totals = try #require(object["totals"] as? [String: Any])
        #expect((totals["requests"] as? NSNumber)?.intValue == report.totals.requests)
        #expect(abs(((totals["error_rate"] as? NSNumber)?.doubleValue ?? -1) - report.totals.errorRate) < 1e-6)
        let routes = try #require(object["routes"] as? [[String: Any]])
        #expect(routes.count == report.routes.count)
        #expect((routes[0]["requests"] as? NSNumber)?.intValue == report.routes[0].requests)
        let latency = try #require(routes[0]["latency_ms"] as? [String: Any])
        #expect(latency["p99"] is NSNumber)
        let decode = try #require(object["decode_failures"] as? [[String: Any]])
        #expect(decode.contains { $0["path"] as? String == "data.apps[*].stability" && $0["missing_key"] as? Bool == true })
        let definitions = try #require(object["definitions"] as? [String: Any])
        #expect((definitions["error"] as? String)?.contains("5xx") == true)
        let series = try #require(object["time_series"] as? [String: Any])
        #expect(series["bucket_seconds"] is NSNumber)
    }

    @Test("HTML is one self-contained page with SVG charts and no external resources")
    func html() {
        let html = Self.report.render(.html)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.components(separatedBy: "<svg").count - 1 == 2)
        #expect(!html.contains("http://") && !html.contains("https://"))
        #expect(!html.contains("<script") && !html.contains("<link"))
        #expect(html.contains("missing key <code>stability</code>"))
        #expect(html.contains("5xx"))
    }

    @Test("Markdown has the sections as tables")
    func markdown() {
        let md = Self.report.render(.markdown)
        for heading in ["## Totals", "## Routes", "## Errors by identity", "## Decode failures", "## Server-Sent Events", "## Over time"] {
            #expect(md.contains(heading))
        }
        #expect(md.contains("| method | route | requests |"))
        #expect(md.contains("**missing key `stability`**"))
    }

    @Test("HTML latency bars are on a log scale: a fast route's p50 stays visible beside another route's 10 s p99")
    func latencyBarsStayReadable() throws {
        let dir = TemporaryDirectory()
        var events: [TraceEvent] = []
        for i in 0..<200 {
            let t = TraceFixture.at(minutes: Int64(i % 50))
            events.append(TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/fast", host: "h", status: 200, durationMs: 4 + Double(i % 3), attempt: 1))))
            events.append(TraceEvent(timestamp: t, .request(.init(method: "GET", route: "/tail", host: "h", status: 200, durationMs: i % 50 == 0 ? 10_000 : 80, attempt: 1))))
        }
        let paths = try TraceFixture.write(events, to: dir.path)
        let html = TraceReport(summary: TraceSummarizer().summarize(files: paths), options: .init(sources: [dir.path])).render(.html)
        // The width of the p50 bar of /fast and the p99 bar of /tail, read from the SVG.
        func width(_ route: String, _ percentile: String) throws -> Double {
            let pattern = try Regex(##"width="([0-9.]+)" height="[0-9.]+" fill="#[0-9a-f]+"><title>GET \##(route) \##(percentile) "##)
            let match = try #require(html.firstMatch(of: pattern), "no \(percentile) bar for \(route)")
            return try #require(Double(String(match.output[1].substring ?? "")))
        }
        let fast = try width("/fast", "p50"), tail = try width("/tail", "p99")
        // Linear, 5 ms beside 10 s would be 1/2000 of the longest bar: under a pixel.
        #expect(fast >= tail / 10, "p50 of /fast \(fast) px against p99 of /tail \(tail) px")
        #expect(fast < tail)
        #expect(html.contains("logarithmic scale"))
    }

    @Test("long cells are cut at a word boundary with an ellipsis, never mid-word unless one word fills the column", arguments: [
        ("Key 'stability' not found in keyed decoding container", 30, "Key 'stability' not found in…"),
        ("short", 30, "short"),
        ("https://api.example.com/averyveryveryverylongpathwithoutspaces", 20, "https://api.example…"),
        ("two\nlines here", 30, "two lines here"),
    ])
    func clipsAtWords(text: String, width: Int, expected: String) {
        let clipped = TraceReport.clip(text, width)
        #expect(clipped == expected)
        #expect(clipped.count <= width)
    }

    @Test("text is aligned, states the error definitions, makes the missing key stand out, and has colour only when asked")
    func text() {
        let plain = Self.report.render(.text)
        #expect(plain.contains("error: a request whose transport failed"))
        // The numbers lead; the definitions close the report.
        #expect(plain.range(of: "TOTALS")!.lowerBound < plain.range(of: "DEFINITIONS")!.lowerBound)
        #expect(plain.range(of: "error: a request whose")!.lowerBound > plain.range(of: "ROUTES")!.lowerBound)
        #expect(plain.contains("MISSING KEY \"stability\""))
        #expect(!plain.contains("\u{1B}["))
        #expect(Self.report.render(.text, colors: true).contains("\u{1B}[31m"))
        // Every route row ends its REQUESTS column at the same offset.
        let lines = plain.split(separator: "\n").map(String.init)
        let header = try! #require(lines.firstIndex { $0.contains("METHOD") && $0.contains("REQUESTS") })
        let end = lines[header].range(of: "REQUESTS")!.upperBound.utf16Offset(in: lines[header])
        for line in lines[(header + 1)...].prefix(Self.report.routes.count) {
            let chars = Array(line.utf16)
            #expect(chars.count > end && chars[end - 1] != 32 && chars[end] == 32)
        }
    }
}
