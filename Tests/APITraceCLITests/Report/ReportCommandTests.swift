import APITraceAnalysis
import APITraceTestSupport
import Foundation
import Testing

/// Runs the real `apitrace` executable built next to this test bundle, with the shared runner.
enum APITraceProcess {
    struct Result { var status: Int32; var stdout: String; var stderr: String }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let out = try APITraceTestSupport.run(try builtProduct("apitrace").path, arguments, environment: environment)
        return Result(status: out.status, stdout: String(decoding: out.stdout, as: UTF8.self), stderr: String(decoding: out.stderr, as: UTF8.self))
    }
}

@Suite("apitrace report, end to end")
struct ReportCommandTests {
    @Test("a report of a folder exits 0; JSON on stdout parses; warnings go to stderr and do not fail the run")
    func reportWithWarnings() throws {
        let traces = try GeneratedTraces(events: 2000, files: 2, seed: 12)
        try "not a trace\n".write(toFile: traces.folder.file("junk.jsonl"), atomically: true, encoding: .utf8)
        let result = try APITraceProcess.run(["report", "--format", "json", traces.folder.path])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((object?["totals"] as? [String: Any])?["events"] as? Int == 2000)
        #expect(result.stderr.contains("junk.jsonl"))
    }

    @Test("--output writes the file; text goes without colour to a non-terminal")
    func outputFile() throws {
        let traces = try GeneratedTraces(events: 1000, files: 1, seed: 13)
        let html = traces.folder.file("report.html")
        let result = try APITraceProcess.run(["report", "--format", "html", "--output", html, traces.paths[0]])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect((try String(contentsOfFile: html, encoding: .utf8)).contains("<svg"))
        let text = try APITraceProcess.run(["report", "--route", "/apps", "--since", "2026-11-22T08:00:00Z", traces.paths[0]])
        #expect(text.status == 0)
        #expect(text.stdout.contains("TOTALS") && !text.stdout.contains("\u{1B}["))
    }

    @Test("with no path the default folder is read and named")
    func defaultFolder() throws {
        let traces = try GeneratedTraces(events: 500, files: 1, seed: 14)
        let result = try APITraceProcess.run(["report"], environment: ["APITRACE_DIR": traces.folder.path])
        #expect(result.status == 0)
        #expect(result.stderr.contains("default trace folder \(traces.folder.path)"))
        #expect(result.stdout.contains("500 events"))
    }

    @Test("nothing usable exits 1 with a message", arguments: [["report", "/nonexistent/apitrace-traces"], ["report"]])
    func nothingUsable(arguments: [String]) throws {
        let empty = TemporaryDirectory()
        let result = try APITraceProcess.run(arguments, environment: ["APITRACE_DIR": empty.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no usable trace file"))
    }

    @Test("bad arguments exit non-zero naming the option", arguments: [
        (["report", "--format", "pdf", "."], "--format"),
        (["report", "--since", "yesterday", "."], "--since"),
        (["report", "--bucket", "soon", "."], "--bucket"),
    ])
    func badArguments(arguments: [String], option: String) throws {
        let result = try APITraceProcess.run(arguments)
        #expect(result.status != 0 && result.status != 1)
        #expect(result.stderr.contains(option))
    }

    @Test("apitrace generate writes files that report reads")
    func generate() throws {
        let folder = TemporaryDirectory()
        let gen = try APITraceProcess.run(["generate", "--events", "300", "--files", "2", "--seed", "5", "--out", folder.path])
        #expect(gen.status == 0)
        #expect(gen.stdout.split(separator: "\n").count == 2)
        let report = try APITraceProcess.run(["report", folder.path])
        #expect(report.status == 0)
        #expect(report.stdout.contains("300 events"))
    }
}
