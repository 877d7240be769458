import APITraceFormat
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

/// Runs the built `apitrace` with `arguments`; `whileRunning` gets the child once it started.
/// Gives up (and kills it) after 30 s.
func runApitrace(_ arguments: [String], whileRunning: (ChildProcess) async throws -> Void = { _ in }) async throws
    -> (status: Int32, stdout: String, stderr: String)
{
    let child = try ChildProcess(try builtProduct("apitrace").path, arguments)
    try await whileRunning(child)
    do {
        return try await child.finished(seconds: 90)
    } catch {
        Issue.record("apitrace did not exit within 90 s")
        try await child.kill()
        return try await child.finished()
    }
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

@Suite("apitrace listen, the built binary against a real SSE server")
struct ListenCommandTests {
    @Test("prints every event across drops as JSON Lines, writes the trace, exits 0 on 204")
    func listensUntilNoContent() async throws {
        let folder = TemporaryDirectory()
        let traceDir = URL(fileURLWithPath: folder.file("traces"))
        try await TestServer.runSSE { base, log in
            let url = base.absoluteString + "/numbers?total=6&drop=3&mode=error&retry=20"
            let result = try await runApitrace(
                ["listen", url, "--header", "Authorization: Bearer s3cr3t", "--trace-dir", traceDir.path, "--format", "jsonl"])
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
        let folder = TemporaryDirectory()
        let traceDir = URL(fileURLWithPath: folder.file("traces"))
        try await TestServer.runSSE { base, log in
            let result = try await runApitrace(
                ["listen", base.absoluteString + "/endless", "--last-event-id", "100", "--trace-dir", traceDir.path]
            ) { child in
                for _ in 0..<400 where log.requests.isEmpty { try await Task.sleep(for: .milliseconds(25)) }
                try await Task.sleep(for: .milliseconds(300))
                child.process.interrupt()
            }
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(log.requests.first?.lastEventID == "100")
            #expect(result.stdout.hasPrefix("id: 1\nevent: message\ndata: tick 1\n\n"))
            #expect(readTrace(traceDir).first?.phase == .open)
        }
    }

    @Test("a 500 exits 1 with the typed error on standard error")
    func failure() async throws {
        try await TestServer.runSSE { base, _ in
            let result = try await runApitrace(["listen", base.absoluteString + "/status/500"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("HTTP 500"))
            #expect(result.stdout.isEmpty)
        }
    }
}
