import APITraceAnalysis
import Foundation
import Testing

/// Runs the real `apitrace` executable built next to this test bundle.
struct APITraceProcess {
    struct Result { var status: Int32; var stdout: String; var stderr: String }

    static var executable: String? {
        var candidates: [URL] = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        // Also .build/debug relative to the package, for runners that start tests from elsewhere.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug"))
        return candidates.map { $0.appendingPathComponent("apitrace").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let folder = TemporaryFolder()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(executable, "apitrace executable not found next to the tests"))
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        _ = FileManager.default.createFile(atPath: folder.file("out"), contents: nil)
        _ = FileManager.default.createFile(atPath: folder.file("err"), contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: folder.file("out"))
        process.standardError = FileHandle(forWritingAtPath: folder.file("err"))
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: folder.file("out"), encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: folder.file("err"), encoding: .utf8)) ?? "")
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
        let empty = TemporaryFolder()
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
        let folder = TemporaryFolder()
        let gen = try APITraceProcess.run(["generate", "--events", "300", "--files", "2", "--seed", "5", "--out", folder.path])
        #expect(gen.status == 0)
        #expect(gen.stdout.split(separator: "\n").count == 2)
        let report = try APITraceProcess.run(["report", folder.path])
        #expect(report.status == 0)
        #expect(report.stdout.contains("300 events"))
    }
}
