import APITraceFormat
import Foundation
import Testing

/// The built `apitrace` executable, next to the test bundle.
func apitraceExecutable() throws -> URL {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        Bundle.main.bundleURL.deletingLastPathComponent(),
        Bundle.main.bundleURL,
    ]
    for folder in candidates {
        let binary = folder.appendingPathComponent("apitrace")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "apitrace next to \(candidates[0].path); run swift build first"])
}

/// Runs `apitrace` with `arguments`; `whileRunning` gets the process once it started. Gives up after 30 s.
func runApitrace(_ arguments: [String], in folder: URL, whileRunning: (Process) async throws -> Void = { _ in }) async throws
    -> (status: Int32, stdout: String, stderr: String)
{
    let process = Process()
    process.executableURL = try apitraceExecutable()
    process.arguments = arguments
    let stdoutURL = folder.appendingPathComponent("stdout.txt")
    let stderrURL = folder.appendingPathComponent("stderr.txt")
    _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
    process.standardError = try FileHandle(forWritingTo: stderrURL)
    try process.run()
    try await whileRunning(process)
    for _ in 0..<600 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
    if process.isRunning {
        process.terminate()
        Issue.record("apitrace did not exit within 30 s")
    }
    process.waitUntilExit()
    return (process.terminationStatus, try String(contentsOf: stdoutURL, encoding: .utf8), try String(contentsOf: stderrURL, encoding: .utf8))
}

func readTrace(_ folder: URL) -> [TraceEvent.SSE] {
    var events: [TraceEvent.SSE] = []
    for file in TraceFileDiscovery.find([folder.path]).files {
        _ = TraceFileReader(path: file).forEachEvent { event in
            if case .sse(let sse) = event.payload { events.append(sse) }
        }
    }
    return events
}

func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apitrace-listen-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

@Suite("apitrace listen, the built binary against a real SSE server")
struct ListenCommandTests {
    @Test("prints every event across drops as JSON Lines, writes the trace, exits 0 on 204")
    func listensUntilNoContent() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let traceDir = folder.appendingPathComponent("traces")
        try await SSETestServer.with { base, log in
            let url = base.absoluteString + "/numbers?total=6&drop=3&mode=error&retry=20"
            let result = try await runApitrace(
                ["listen", url, "--header", "Authorization: Bearer s3cr3t", "--trace-dir", traceDir.path, "--format", "jsonl"],
                in: folder)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            let expected = (1...6).map { #"{"id":"\#($0)","type":"message","data":"event \#($0)\nline 2"}"# }
            #expect(lines == expected)
            #expect(log.requests.map(\.lastEventID) == [nil, "3", "6"])
            #expect(result.stderr.contains("reconnecting in"))
            #expect(!result.stderr.contains("s3cr3t"))

            let trace = readTrace(traceDir)
            #expect(trace.filter { $0.phase == .open }.count == 2)
            #expect(trace.filter { $0.phase == .reconnect }.map(\.lastEventID) == ["3", "6"])
            #expect(trace.filter { $0.phase == .close }.map(\.reason) == ["network_error", "network_error", "http_status"])
            #expect(trace.allSatisfy { $0.route == "/numbers" })
        }
    }

    @Test("text format, --last-event-id, and Ctrl-C exits 0 with the trace written")
    func interrupt() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let traceDir = folder.appendingPathComponent("traces")
        try await SSETestServer.with { base, log in
            let result = try await runApitrace(
                ["listen", base.absoluteString + "/endless", "--last-event-id", "100", "--trace-dir", traceDir.path],
                in: folder
            ) { process in
                for _ in 0..<400 where log.requests.isEmpty { try await Task.sleep(for: .milliseconds(25)) }
                try await Task.sleep(for: .milliseconds(300))
                process.interrupt()
            }
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(log.requests.first?.lastEventID == "100")
            #expect(result.stdout.hasPrefix("id: 1\nevent: message\ndata: tick 1\n\n"))
            #expect(readTrace(traceDir).first?.phase == .open)
        }
    }

    @Test("a 500 exits 1 with the typed error on standard error")
    func failure() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await SSETestServer.with { base, _ in
            let result = try await runApitrace(["listen", base.absoluteString + "/status/500"], in: folder)
            #expect(result.status == 1)
            #expect(result.stderr.contains("HTTP 500"))
            #expect(result.stdout.isEmpty)
        }
    }
}
