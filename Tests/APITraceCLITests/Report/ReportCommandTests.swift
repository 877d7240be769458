import APITraceAnalysis
import APITraceTestSupport
import Foundation
import Testing

@Suite("apitrace report, end to end")
struct ReportCommandTests {
    @Test("a report of a folder exits 0; JSON on stdout parses; warnings go to stderr and do not fail the run")
    func reportWithWarnings() async throws {
        let traces = try GeneratedTraces(events: 2000, files: 2, seed: 12)
        try "not a trace\n".write(toFile: traces.folder.file("junk.jsonl"), atomically: true, encoding: .utf8)
        let result = try await apitrace(["report", "--format", "json", traces.folder.path])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((object?["totals"] as? [String: Any])?["events"] as? Int == 2000)
        #expect(result.stderr.contains("junk.jsonl"))
    }

    @Test("--output writes the file; text goes without colour to a non-terminal")
    func outputFile() async throws {
        let traces = try GeneratedTraces(events: 1000, files: 1, seed: 13)
        let html = traces.folder.file("report.html")
        let result = try await apitrace(["report", "--format", "html", "--output", html, traces.paths[0]])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect((try String(contentsOfFile: html, encoding: .utf8)).contains("<svg"))
        let text = try await apitrace(["report", "--route", "/apps", "--since", "2026-11-22T08:00:00Z", traces.paths[0]])
        #expect(text.status == 0)
        #expect(text.stdout.contains("TOTALS") && !text.stdout.contains("\u{1B}["))
    }

    @Test("with no path the default folder is read and named")
    func defaultFolder() async throws {
        let traces = try GeneratedTraces(events: 500, files: 1, seed: 14)
        let result = try await apitrace(["report"], environment: ["APITRACE_DIR": traces.folder.path])
        #expect(result.status == 0)
        #expect(result.stderr.contains("default trace folder \(traces.folder.path)"))
        #expect(result.stdout.contains("500 events"))
    }

    @Test("nothing usable exits 1 with a message", arguments: [["report", "/nonexistent/apitrace-traces"], ["report"]])
    func nothingUsable(arguments: [String]) async throws {
        let empty = TemporaryDirectory()
        let result = try await apitrace(arguments, environment: ["APITRACE_DIR": empty.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no usable trace file"))
    }

    @Test("bad arguments exit non-zero naming the option", arguments: [
        (["report", "--format", "pdf", "."], "--format"),
        (["report", "--since", "yesterday", "."], "--since"),
        (["report", "--bucket", "soon", "."], "--bucket"),
    ])
    func badArguments(arguments: [String], option: String) async throws {
        let result = try await apitrace(arguments)
        #expect(result.status != 0 && result.status != 1)
        #expect(result.stderr.contains(option))
    }
}
