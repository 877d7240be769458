import APITraceTestSupport
import Foundation
import Testing

/// `apitrace collect --otlp-endpoint` as a real child process: SIGKILLed with uploads spooled while
/// the OTLP receiver (Python, official `opentelemetry-proto` classes) is down, started again, and the
/// spool drained once; the endpoint's headers come from `OTEL_EXPORTER_OTLP_HEADERS` and are never printed.
@Suite("apitrace collect --otlp-endpoint across a SIGKILL")
struct CollectOTLPForwardingTests {
    static let secret = "otlp-secret-4f9c2a"

    static func startCollector(_ dir: TemporaryDirectory, otlpPort: Int) async throws -> (ChildProcess, Int) {
        let child = try ChildProcess(
            try builtProduct("apitrace").path,
            ["collect", "--listen", "127.0.0.1:0", "--dir", dir.file("store"), "--token-env", "APITRACE_TEST_TOKEN",
             "--otlp-endpoint", "http://127.0.0.1:\(otlpPort)"],
            environment: ["APITRACE_TEST_TOKEN": CollectCommandTests.token, "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20\(secret)"])
        let line = try await child.waitForLine("the collector to listen") { $0.contains("listening on http://127.0.0.1:") }
        let port = Int(line.split(separator: ":")[3].split(separator: "/")[0])!
        return (child, port)
    }

    @Test("spooled while the receiver is down, SIGKILLed, restarted: every event arrives once, with the headers, never printed")
    func drainsAfterRestart() async throws {
        let dir = TemporaryDirectory()
        let otlpPort = try freePort()
        let (first, port) = try await Self.startCollector(dir, otlpPort: otlpPort)
        let counts = [12, 7, 30]
        for (i, n) in counts.enumerated() {
            let bytes = TraceFiles.make(producer: "fwd\(i)", events: TraceFiles.requests(n, seed: i))
            let answer = try await HTTPClient.upload("http://127.0.0.1:\(port)/v1/traces", bytes, token: CollectCommandTests.token)
            #expect(answer.status == 201)
        }
        let metrics = try await HTTPClient.request("GET", "http://127.0.0.1:\(port)/metrics")
        #expect(metrics.text.contains("apitrace_collector_otlp_spool_files 3\n"))
        try await first.kill(SIGKILL)
        let firstOutput = first.lines.joined(separator: "\n") + first.standardError

        let receiver = try await OTLPReceiver.start(in: dir.path, port: otlpPort)
        defer { receiver.stop() }
        let (second, port2) = try await Self.startCollector(dir, otlpPort: otlpPort)
        defer { second.stop() }
        try await waitUntil("the spool to drain", seconds: 60) {
            receiver.requests.filter { $0.path == "/v1/traces" }.count >= 3
        }
        try await Task.sleep(for: .seconds(1))
        let traces = receiver.requests.filter { $0.path == "/v1/traces" }
        #expect(traces.count == 3, "one request per spooled upload, none twice")
        var spans = 0
        for request in traces {
            #expect(request.headers["authorization"] == "Bearer \(Self.secret)")
            for group in request.body["resourceSpans"] as? [[String: Any]] ?? [] {
                for scope in group["scopeSpans"] as? [[String: Any]] ?? [] { spans += (scope["spans"] as? [Any])?.count ?? 0 }
            }
        }
        #expect(spans == counts.reduce(0, +))
        let after = try await HTTPClient.request("GET", "http://127.0.0.1:\(port2)/metrics")
        #expect(after.text.contains("apitrace_collector_otlp_forwarded_total 3\n"))
        #expect(after.text.contains("apitrace_collector_otlp_spool_files 0\n"))
        #expect(!after.text.contains(Self.secret))
        let spool = try FileManager.default.contentsOfDirectory(atPath: dir.file("store/.otlp-spool"))
        #expect(spool.filter { $0.hasSuffix(".spool") }.isEmpty)
        second.stop()
        let output = firstOutput + second.lines.joined(separator: "\n") + second.standardError
        #expect(!output.contains(Self.secret))
        #expect(output.contains("forwarding to http://127.0.0.1:\(otlpPort)"))
    }
}
