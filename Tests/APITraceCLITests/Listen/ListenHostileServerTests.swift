import APITraceFormat
import APITraceTestSupport
import APITraceServerTestSupport
import Foundation
import Testing

/// The peak resident memory (`VmHWM`) of a running process, in bytes; 0 when it cannot be read.
func peakResidentBytes(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

@Suite("apitrace listen against hostile SSE servers")
struct ListenHostileServerTests {
    @Test("an endless data: line: listen's memory stays bounded, each connection is dropped at the line limit and reconnected")
    func endlessLine() async throws {
        try await TestServer.runSSE { base, log in
            // The server stops at 2 GB per connection: main's listen held it all (3 GB in 7 s in the issue).
            let url = base.absoluteString + "/hostile/endless-line?cap=2048"
            var peak = 0
            let result = try await runApitrace(["listen", url]) { child in
                let clock = ContinuousClock()
                // Three drops take a few seconds (the backoff grows); the rest is room for a loaded machine.
                let deadline = clock.now + .seconds(60)
                while clock.now < deadline, child.standardError.components(separatedBy: "line_too_long").count < 4 {
                    peak = max(peak, peakResidentBytes(child.process.processIdentifier))
                    try await Task.sleep(for: .milliseconds(50))
                }
                peak = max(peak, peakResidentBytes(child.process.processIdentifier))
                child.process.interrupt()
            }
            #expect(result.status == 0, "stderr: \(result.stderr.prefix(2000))")
            #expect(result.stderr.components(separatedBy: "dropped the connection: line_too_long").count >= 4)
            #expect(result.stderr.contains("reconnecting in"))
            #expect(result.stdout.isEmpty)
            #expect(log.requests.count >= 3)
            // The limit is 1 MiB; the process peaked at 55 MB here while the server offered 2 GB per
            // connection (main's listen held it all). 256 MB leaves room for a loaded machine.
            #expect(peak > 0 && peak < 256 << 20, "peak resident memory \(peak) bytes")
            #expect(result.stderr.utf8.count < 16_384, "the log lines stay short")
        }
    }

    @Test("--max-event-bytes: data: lines that never end an event are cut there, traced as fail event_too_large")
    func neverEndingEvent() async throws {
        let folder = TemporaryDirectory()
        let traceDir = URL(fileURLWithPath: folder.file("traces"))
        try await TestServer.runSSE { base, _ in
            let url = base.absoluteString + "/hostile/never-dispatch?cap=1024"
            let result = try await runApitrace(["listen", url, "--max-event-bytes", "65536", "--trace-dir", traceDir.path]) { child in
                for _ in 0..<800 where child.standardError.components(separatedBy: "event_too_large").count < 3 {
                    try await Task.sleep(for: .milliseconds(25))
                }
                child.process.interrupt()
            }
            #expect(result.status == 0, "stderr: \(result.stderr.prefix(2000))")
            let trace = readTrace(traceDir)
            let fails = trace.filter { $0.phase == .fail }
            #expect(fails.count >= 2)
            #expect(fails.allSatisfy { $0.reason == "event_too_large" && $0.status == 200 })
            #expect(trace.filter { $0.phase == .reconnect }.count >= 2)
        }
    }

    @Test("a 50 MB id: the trace stays readable and apitrace report counts every reconnect")
    func fiftyMegabyteID() async throws {
        let folder = TemporaryDirectory()
        let traceDir = URL(fileURLWithPath: folder.file("traces"))
        try await TestServer.runSSE { base, _ in
            let url = base.absoluteString + "/hostile/huge-id?bytes=\(50 << 20)"
            let listened = try await runApitrace(["listen", url, "--trace-dir", traceDir.path]) { child in
                for _ in 0..<1200 where child.standardError.components(separatedBy: "reconnecting in").count < 4 {
                    try await Task.sleep(for: .milliseconds(25))
                }
                child.process.interrupt()
            }
            #expect(listened.status == 0)
            #expect(listened.stderr.utf8.count < 16_384)
            let trace = readTrace(traceDir)
            let reconnects = trace.filter { $0.phase == .reconnect }.count
            #expect(reconnects >= 3)
            var longest = 0
            for file in TraceFileDiscovery.find([traceDir.path]).files {
                let result = TraceFileReader(path: file).forEachRawLine { line, _ in
                    longest = max(longest, line.count)
                    return true
                }
                #expect(result.longLines.isEmpty && result.problem == nil)
            }
            #expect(longest < 4096)

            let report = try await runApitrace(["report", traceDir.path, "--format", "json", "--no-cache"])
            #expect(report.status == 0, "\(report.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
            let sse = json?["sse"] as? [String: Any]
            #expect(sse?["reconnects"] as? Int == reconnects)
            #expect((sse?["fails"] as? Int ?? 0) >= 3)
        }
    }

    @Test("retry: 0 does not make a reconnect storm: connections come at least 0.5 s apart, at most 7 in any 3 s")
    func retryZero() async throws {
        try await TestServer.runSSE { base, log in
            let result = try await runApitrace(["listen", base.absoluteString + "/hostile/retry-zero"]) { child in
                // Three connections take about 1.5 s at the floor; a loaded machine may take longer.
                for _ in 0..<800 where log.requests.count < 3 { try await Task.sleep(for: .milliseconds(25)) }
                child.process.interrupt()
            }
            #expect(result.status == 0)
            let requests = log.requests
            #expect(requests.count >= 3)
            for n in 1..<requests.count {
                #expect(requests[n].at - requests[n - 1].at >= .milliseconds(500))
            }
            for start in requests {
                #expect(requests.filter { $0.at >= start.at && $0.at - start.at < .seconds(3) }.count <= 7)
            }
        }
    }

    @Test("--header values do not follow a redirect to another origin")
    func crossOriginRedirect() async throws {
        try await TestServer.runSSE { first, _ in
            try await TestServer.runSSE { second, secondLog in
                var allowed = CharacterSet.alphanumerics
                allowed.insert(charactersIn: "-._~")
                let target = (second.absoluteString + "/headers-stream").addingPercentEncoding(withAllowedCharacters: allowed)!
                let result = try await runApitrace([
                    "listen", first.absoluteString + "/redirect?status=307&to=" + target,
                    "--header", "Authorization: Bearer s3cr3t", "--header", "X-Api-Key: k3y", "--format", "jsonl",
                ])
                #expect(result.status == 0, "stderr: \(result.stderr)")
                #expect(result.stdout == #"{"id":"1","type":"message","data":"ok"}"# + "\n")
                #expect(secondLog.requests.count == 2)
                #expect(secondLog.requests.allSatisfy { $0.headers["authorization"] == nil && $0.headers["x-api-key"] == nil })
            }
        }
    }
}
