import APITraceTestSupport
import Foundation
import Testing

/// `apitrace export --format otlp`, the built binary, against a real OTLP/HTTP receiver (Python,
/// the official opentelemetry-proto classes) on trace files written by independent Python.
@Suite("apitrace export --format otlp")
struct OTLPExportCommandTests {
    static let secret = "cli-s3cr3t-t0ken"

    @Test("sends with the OTEL_EXPORTER_OTLP_HEADERS headers, never printing them; with --state a second run sends only what is new")
    func sendsOnceWithHeaders() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces"), later = dir.file("later")
        try await OTLPExpectations.generate(into: traces, seed: 21, requests: 150)
        try await OTLPExpectations.generate(into: later, seed: 22, requests: 40)
        let receiver = try await OTLPReceiver.start(in: dir.path)
        defer { receiver.stop() }
        let env = ["OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20\(Self.secret)"]
        let arguments = ["export", "--format", "otlp", "--endpoint", receiver.endpoint, "--state", dir.file("state.json"), traces]
        let first = try await apitrace(arguments, environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("151 spans, 6 log records"))
        // New files arrive (renamed in with names that sort later, as a writer's next files would).
        for (i, name) in try FileManager.default.contentsOfDirectory(atPath: later).sorted().enumerated() {
            try FileManager.default.moveItem(atPath: later + "/" + name, toPath: traces + "/20261123T00000\(i)Z-0a1b2c3d-000\(i + 3).jsonl.gz")
        }
        let second = try await apitrace(arguments, environment: env)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("41 spans, 6 log records"))
        for output in [first.stdout, first.stderr, second.stdout, second.stderr] { #expect(!output.contains(Self.secret)) }
        let requests = receiver.requests
        #expect(!requests.isEmpty && requests.allSatisfy { $0.headers["authorization"] == "Bearer \(Self.secret)" })
        #expect(try String(contentsOfFile: dir.file("state.json"), encoding: .utf8).contains(Self.secret) == false)
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 192 12")
    }

    @Test("503s with Retry-After, then recovery: exit 0, everything once")
    func retries() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 23, requests: 30)
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: ["503:1", "503:1"])
        defer { receiver.stop() }
        let result = try await apitrace(["export", "--format", "otlp", "--otlp-protocol", "http/json", "--endpoint", receiver.endpoint, traces])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(receiver.requests.filter { $0.body["refused"] != nil }.count == 2)
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 31 6")
    }

    @Test("an endpoint that is down: exit 1 naming it, nothing marked; the next run, with it up, sends everything once")
    func downThenUp() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 24, requests: 20)
        let port = try freePort()
        let state = dir.file("state.json")
        let down = try await apitrace(["export", "--format", "otlp", "--endpoint", "http://127.0.0.1:\(port)", "--state", state, traces],
                                      environment: ["OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=\(Self.secret)"])
        #expect(down.status == 1)
        #expect(down.stderr.contains("127.0.0.1:\(port)/v1/traces") && down.stderr.contains("next run"))
        #expect(!down.stderr.contains(Self.secret))
        let receiver = try await OTLPReceiver.start(in: dir.path)
        defer { receiver.stop() }
        let up = try await apitrace(["export", "--format", "otlp", "--endpoint", receiver.endpoint, "--state", state, traces])
        #expect(up.status == 0, "\(up.stderr)")
        let checked = try await OTLPExpectations.check([traces], received: dir.file("received.jsonl"))
        #expect(checked == "OK 21 6")
    }

    @Test("--output writes the OTLP JSON requests one per line, which the official classes read")
    func output() async throws {
        let dir = TemporaryDirectory()
        let traces = dir.file("traces")
        try await OTLPExpectations.generate(into: traces, seed: 25, requests: 80)
        let result = try await apitrace(["export", "--format", "otlp", "--output", dir.file("otlp.jsonl"), traces])
        #expect(result.status == 0, "\(result.stderr)")
        let checked = try await OTLPExpectations.check([traces], received: dir.file("otlp.jsonl"))
        #expect(checked == "OK 81 6")
    }

    @Test("a malformed OTEL_EXPORTER_OTLP_HEADERS: exit 1 naming the variable, not the value")
    func badHeaders() async throws {
        let dir = TemporaryDirectory()
        try await OTLPExpectations.generate(into: dir.path, seed: 26, requests: 2)
        let result = try await apitrace(["export", "--format", "otlp", "--endpoint", "http://127.0.0.1:9", dir.path],
                                        environment: ["OTEL_EXPORTER_OTLP_HEADERS": "authorization \(Self.secret)"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("OTEL_EXPORTER_OTLP_HEADERS") && !result.stderr.contains(Self.secret))
    }
}
