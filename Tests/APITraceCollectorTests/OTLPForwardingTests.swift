import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceExport
import APITraceFormat
import Foundation
import Testing

/// The collector forwards what it stores to a real OTLP/HTTP receiver (Python, decoding with the
/// official `opentelemetry-proto` classes) from its spool, off the request path: the receiver
/// down then up, hanging, answering 503 with Retry-After, refusing for good; the spool's bound.
/// Uploads are answered at once whatever the receiver does; what the receiver accepts is each
/// stored event exactly once, counted against the lines the test wrote.
@Suite("Collector forwarding to OTLP", .serialized)
struct OTLPForwardingTests {
    static let token = IngestMetricsTests.token

    static func start(
        _ dir: TemporaryDirectory, otlpPort: Int, maxFiles: Int = 100, maxBytes: Int = 1 << 30, timeout: Duration = .seconds(2)
    ) async throws -> RunningCollector {
        var configuration = TraceCollector.Configuration(directory: dir.file("store"), tokens: [token])
        configuration.otlpForwarding = OTLPForwarding(
            endpoint: OTLPEndpoint(base: URL(string: "http://127.0.0.1:\(otlpPort)")!), maxSpoolBytes: maxBytes, maxSpoolFiles: maxFiles,
            timeout: timeout, attemptsPerRound: 2, retryDelay: .milliseconds(100), maxRetryDelay: .seconds(1))
        return try await RunningCollector.start(try TraceCollector(configuration: configuration))
    }

    /// Upload `index`: `requests` requests (spans) and 4 other events (log records), app version `1.<index>`.
    static func file(_ index: Int, requests: Int) -> [UInt8] {
        IngestMetricsTests.file(
            index: index, appVersion: "1.\(index)", requests: IngestMetricsTests.requests(seed: index, count: requests, appVersion: "1.\(index)"))
    }

    /// Uploads and checks it was stored, answered within `seconds` whatever the receiver does.
    static func upload(_ server: RunningCollector, _ bytes: [UInt8], within seconds: Double = 30) async throws {
        let started = Date()
        let answer = try await HTTPClient.upload(server.uploadURL, bytes, token: token)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(Date().timeIntervalSince(started) < seconds, "an upload waited on the OTLP endpoint")
    }

    /// Spans and log records accepted by the receiver, counted per `service.version` (one per upload).
    static func arrived(_ receiver: OTLPReceiver) -> (spans: [String: Int], logs: [String: Int]) {
        var spans: [String: Int] = [:], logs: [String: Int] = [:]
        for request in receiver.requests where request.body["refused"] == nil {
            for (key, inner, items) in [("resourceSpans", "scopeSpans", "spans"), ("resourceLogs", "scopeLogs", "logRecords")] {
                for group in request.body[key] as? [[String: Any]] ?? [] {
                    let attributes = (group["resource"] as? [String: Any])?["attributes"] as? [[String: Any]] ?? []
                    let version = attributes.first { $0["key"] as? String == "service.version" }
                        .flatMap { ($0["value"] as? [String: Any])?["stringValue"] as? String } ?? "?"
                    let count = (group[inner] as? [[String: Any]] ?? []).reduce(0) { $0 + (($1[items] as? [Any])?.count ?? 0) }
                    if key == "resourceSpans" { spans[version, default: 0] += count } else { logs[version, default: 0] += count }
                }
            }
        }
        return (spans, logs)
    }

    /// The value of one sample on the collector's `/metrics`.
    static func metric(_ server: RunningCollector, _ sample: String) async throws -> Int {
        let text = try await IngestMetricsTests.scrape(server)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }, "no \(sample) on /metrics")
        return Int(line.split(separator: " ").last!)!
    }

    static func waitForMetric(_ server: RunningCollector, _ sample: String, _ value: Int, seconds: Double = 60) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last = -1
        while Date() < deadline {
            last = try await metric(server, sample)
            if last == value { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("\(sample) is \(last), expected \(value)")
        throw TimedOut(description: sample)
    }

    static func spooledFiles(_ dir: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.file("store/.otlp-spool"))) ?? []).filter { $0.hasSuffix(".spool") }
    }

    @Test("the receiver down, then up: uploads answered at once, then every event arrives once")
    func downThenUp() async throws {
        let dir = TemporaryDirectory()
        let port = try freePort()
        let server = try await Self.start(dir, otlpPort: port)
        defer { Task { await server.stop() } }
        let sizes = [50, 60, 70]
        for (i, n) in sizes.enumerated() { try await Self.upload(server, Self.file(i, requests: n)) }
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spooled_total") == 3)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_files") == 3)
        #expect(Self.spooledFiles(dir).count == 3)
        // The spool is not a trace folder: report and export of the collector's folder see each upload once.
        #expect(TraceFileDiscovery.find([dir.file("store")]).files.count == 3)
        try await Task.sleep(for: .seconds(1))
        #expect(try await Self.metric(server, "apitrace_collector_otlp_retries_total") > 0)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_forwarded_total") == 0)

        let receiver = try await OTLPReceiver.start(in: dir.path, port: port)
        defer { receiver.stop() }
        try await Self.waitForMetric(server, "apitrace_collector_otlp_forwarded_total", 3)
        // Nothing more comes later: each event once.
        try await Task.sleep(for: .seconds(1))
        let arrived = Self.arrived(receiver)
        #expect(arrived.spans == ["1.0": 50, "1.1": 60, "1.2": 70])
        #expect(arrived.logs == ["1.0": 4, "1.1": 4, "1.2": 4])
        #expect(try await Self.metric(server, "apitrace_collector_otlp_sent_total{signal=\"traces\"}") == 180)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_sent_total{signal=\"logs\"}") == 12)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_files") == 0)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_bytes") == 0)
        #expect(Self.spooledFiles(dir).isEmpty)
    }

    @Test("a receiver that never answers: uploads are still answered at once; after its timeout the batch is sent again")
    func hangingReceiver() async throws {
        let dir = TemporaryDirectory()
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: ["hang"])
        defer { receiver.stop() }
        let server = try await Self.start(dir, otlpPort: receiver.port, timeout: .seconds(3))
        defer { Task { await server.stop() } }
        try await Self.upload(server, Self.file(0, requests: 40))
        // The forwarder is now waiting on the hung request; uploads go on.
        try await Task.sleep(for: .milliseconds(300))
        for i in 1...5 { try await Self.upload(server, Self.file(i, requests: 10), within: 2) }
        try await Self.waitForMetric(server, "apitrace_collector_otlp_forwarded_total", 6)
        try await Task.sleep(for: .seconds(1))
        let arrived = Self.arrived(receiver)
        #expect(arrived.spans == ["1.0": 40, "1.1": 10, "1.2": 10, "1.3": 10, "1.4": 10, "1.5": 10])
        #expect(arrived.logs.values.allSatisfy { $0 == 4 } && arrived.logs.count == 6)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_retries_total") >= 1)
    }

    @Test("503 with Retry-After: the batch is sent again no sooner than asked, once")
    func retryAfter() async throws {
        let dir = TemporaryDirectory()
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: ["503:2"])
        defer { receiver.stop() }
        let server = try await Self.start(dir, otlpPort: receiver.port)
        defer { Task { await server.stop() } }
        try await Self.upload(server, Self.file(0, requests: 30))
        try await Self.waitForMetric(server, "apitrace_collector_otlp_forwarded_total", 1)
        let traces = receiver.requests.filter { $0.path == "/v1/traces" }
        try #require(traces.count == 2)
        #expect(traces[0].body["refused"] as? Int == 503)
        #expect(traces[1].time - traces[0].time >= 1.9, "Retry-After: 2 not honoured")
        #expect(Self.arrived(receiver).spans == ["1.0": 30])
        #expect(try await Self.metric(server, "apitrace_collector_otlp_retries_total") == 1)
    }

    @Test("a refusal retrying cannot change (400) drops that upload, counted, and the next ones go on")
    func rejectedForGood() async throws {
        let dir = TemporaryDirectory()
        let receiver = try await OTLPReceiver.start(in: dir.path, replies: ["400"])
        defer { receiver.stop() }
        let server = try await Self.start(dir, otlpPort: receiver.port)
        defer { Task { await server.stop() } }
        try await Self.upload(server, Self.file(0, requests: 5))
        try await Self.waitForMetric(server, "apitrace_collector_otlp_dropped_total{reason=\"rejected\"}", 1)
        try await Self.upload(server, Self.file(1, requests: 7))
        try await Self.waitForMetric(server, "apitrace_collector_otlp_forwarded_total", 1)
        #expect(Self.arrived(receiver).spans == ["1.1": 7])
        #expect(Self.spooledFiles(dir).isEmpty)
    }

    @Test("past the spool's bounds the oldest uploads are dropped and counted, never the upload refused")
    func spoolBounds() async throws {
        let dir = TemporaryDirectory()
        let port = try freePort()
        let server = try await Self.start(dir, otlpPort: port, maxFiles: 2)
        defer { Task { await server.stop() } }
        let files = (0..<4).map { Self.file($0, requests: 20 + $0) }
        for file in files { try await Self.upload(server, file) }
        #expect(try await Self.metric(server, "apitrace_collector_otlp_dropped_total{reason=\"spool_full\"}") == 2)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_dropped_bytes_total") == files[0].count + files[1].count)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_files") == 2)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_bytes") == files[2].count + files[3].count)
        #expect(Self.spooledFiles(dir).count == 2)
        #expect(TraceFileDiscovery.find([dir.file("store")]).files.count == 4, "every upload is stored")

        let receiver = try await OTLPReceiver.start(in: dir.path, port: port)
        defer { receiver.stop() }
        try await Self.waitForMetric(server, "apitrace_collector_otlp_forwarded_total", 2)
        try await Task.sleep(for: .milliseconds(500))
        #expect(Self.arrived(receiver).spans == ["1.2": 22, "1.3": 23], "the newest two are sent")
    }

    @Test("an upload larger than the whole spool is stored, not spooled, and counted as dropped")
    func uploadLargerThanTheSpool() async throws {
        let dir = TemporaryDirectory()
        let port = try freePort()
        let small = Self.file(0, requests: 3)
        let server = try await Self.start(dir, otlpPort: port, maxBytes: small.count + 10)
        defer { Task { await server.stop() } }
        try await Self.upload(server, Self.file(1, requests: 500))
        #expect(try await Self.metric(server, "apitrace_collector_otlp_dropped_total{reason=\"spool_full\"}") == 1)
        try await Self.upload(server, small)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_files") == 1)
        #expect(try await Self.metric(server, "apitrace_collector_otlp_spool_bytes") == small.count)
    }
}
