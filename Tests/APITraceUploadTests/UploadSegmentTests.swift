import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceServerTestSupport
import APITraceCollector
import APITraceFormat
import APITraceUpload
import Foundation
import Hummingbird
import Testing

/// The segment cadence: an uploader made for a writer asks it for a segment on a cadence, sends it
/// at once, cuts nothing when nothing is new or while uploads fail, and a segment re-sent after a
/// lost receipt is counted once. Against the real collector on 127.0.0.1 and a real writer. The
/// cadence is shortened here (the library's 60 s default runs in the fleet end-to-end test); the
/// writer keeps its 1 h / 4 MiB rotation and the uploader its 2 s minimumFileAge.
@Suite("Upload segments")
struct UploadSegmentTests {
    static let token = "secret-token"

    static func collector(_ dir: TemporaryDirectory) throws -> TraceCollector {
        try TraceCollector(configuration: .init(directory: dir.path, tokens: [token]))
    }

    static func uploader(
        _ writer: TraceFileWriter, _ url: String, segment: Duration = .milliseconds(200), events: Recorded<TraceUploader.Event>? = nil,
        configure: (inout TraceUploader.Configuration) -> Void = { _ in }
    ) -> TraceUploader {
        var configuration = TraceUploader.Configuration(writer: writer, endpoint: URL(string: url)!, token: token)
        configuration.segmentInterval = segment
        configuration.retry = RetryPolicy(initial: .milliseconds(50), maximum: .milliseconds(300))
        configuration.onEvent = { events?.append($0) }
        configuration.diagnostics = { _ in }
        configure(&configuration)
        return TraceUploader(configuration: configuration)
    }

    static func requests(_ count: Int, route: String) -> [TraceEvent] {
        (0..<count).map { i in TraceEvent(.request(.init(method: "GET", route: route, status: i % 10 == 0 ? 503 : 200, durationMs: 12))) }
    }

    /// The collector's `/metrics` request counts per route, read over HTTP as Prometheus would: the
    /// second of two scrapes, since a new series is served at 0 in the first that shows it.
    static func countedRequests(_ baseURL: String) async throws -> [String: Double] {
        _ = try await HTTPClient.request("GET", baseURL + "/metrics")
        let answer = try await HTTPClient.request("GET", baseURL + "/metrics")
        var counts: [String: Double] = [:]
        for line in answer.text.split(separator: "\n") where line.hasPrefix("apitrace_http_client_requests_total{") {
            guard let range = line.range(of: #"url_template=""#), let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            let route = line[range.upperBound...].prefix { $0 != "\"" }
            counts[String(route), default: 0] += value
        }
        return counts
    }

    @Test("what the app captured reaches the collector on the segment cadence, long before the writer's 1 h rotation")
    func freshWithDefaults() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let server = try await RunningCollector.start(try Self.collector(target))
        defer { Task { await server.stop() } }
        let writer = TraceFileWriter(configuration: .init(directory: source.path, producer: "fresh"))
        defer { writer.close() }
        let uploader = Self.uploader(writer, server.uploadURL)
        uploader.start()
        for event in Self.requests(30, route: "/a") { writer.append(event) }
        try await waitUntil("the first segment at the collector", seconds: 120) { uploader.statistics.delivered == 1 }
        #expect(try await Self.countedRequests(server.baseURL) == ["/a": 30])
        for event in Self.requests(12, route: "/b") { writer.append(event) }
        try await waitUntil("the second segment at the collector", seconds: 120) { uploader.statistics.delivered == 2 }
        #expect(try await Self.countedRequests(server.baseURL) == ["/a": 30, "/b": 12])
        // The writer's own rotation (1 h, 4 MiB) never ran: the segments are the uploader's.
        #expect(writer.statistics.filesStarted == 2)
        await uploader.stop()
    }

    @Test("nothing new, nothing sent: idle segments cut no file and make no upload")
    func nothingNewNothingSent() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let server = try await RunningCollector.start(try Self.collector(target))
        defer { Task { await server.stop() } }
        let writer = TraceFileWriter(configuration: .init(directory: source.path, producer: "idle"))
        defer { writer.close() }
        let uploader = Self.uploader(writer, server.uploadURL, segment: .milliseconds(100))
        uploader.start()
        for event in Self.requests(5, route: "/a") { writer.append(event) }
        try await waitUntil("one segment", seconds: 120) { uploader.statistics.delivered == 1 }
        try await Task.sleep(for: .seconds(1.5))  // 15 segment ticks with nothing new
        #expect(uploader.statistics.delivered == 1)
        #expect(writer.statistics.filesStarted == 1)
        #expect(server.collector.metrics.snapshot.accepted == 1)
        #expect(source.traceFiles.isEmpty)
        await uploader.stop()
    }

    @Test("offline: no segment per tick while uploads fail; back online, everything drains in order, each event counted once")
    func offlineThenBack() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let port = try freePort()
        let writer = TraceFileWriter(configuration: .init(directory: source.path, producer: "offline", flushInterval: .milliseconds(20)))
        defer { writer.close() }
        let events = Recorded<TraceUploader.Event>()
        let uploader = Self.uploader(writer, "http://127.0.0.1:\(port)/v1/traces", segment: .milliseconds(100), events: events)
        uploader.start()
        // 40 ticks of traffic while nothing listens.
        for tick in 0..<40 {
            for event in Self.requests(5, route: "/r\(tick % 4)") { writer.append(event) }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(uploader.statistics.retries >= 2)
        // At most the one segment cut before the first failure, plus the file being written.
        #expect(writer.statistics.filesStarted <= 2, "\(writer.statistics.filesStarted) files for 40 ticks offline")
        #expect(source.traceFiles.count <= 2)

        let server = try await RunningCollector.start(try Self.collector(target), port: port)
        defer { Task { await server.stop() } }
        try await waitUntil("the folder to drain", seconds: 60) {
            source.traceFiles.isEmpty && writer.activeFilePath == nil
        }
        #expect(try await Self.countedRequests(server.baseURL) == ["/r0": 50, "/r1": 50, "/r2": 50, "/r3": 50])
        #expect(server.collector.metrics.snapshot.duplicates == 0)
        let delivered = events.all.compactMap { if case .delivered(let file, _, _) = $0 { file } else { nil } }
        #expect(delivered == delivered.sorted(), "sent oldest first")
        await uploader.stop()
    }

    @Test("a segment whose receipt is lost (the collector stored it, the answer never came) is re-sent and counted once")
    func lostReceipt() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let plan = FaultPlan()
        // The first upload is stored, then its answer is held past the uploader's request timeout.
        plan.holdAfterPassed = (count: 1, seconds: 3)
        let server = try await RunningCollector.start(try Self.collector(target)) { $0.add(middleware: FaultInjection(plan: plan)) }
        defer { Task { await server.stop() } }
        let writer = TraceFileWriter(configuration: .init(directory: source.path, producer: "lost"))
        defer { writer.close() }
        let uploader = Self.uploader(writer, server.uploadURL) { $0.requestTimeout = .seconds(1) }
        uploader.start()
        for event in Self.requests(25, route: "/once") { writer.append(event) }
        try await waitUntil("the first answer to time out", seconds: 120) { uploader.statistics.retries >= 1 }
        plan.holdAfterPassed = nil
        try await waitUntil("the segment delivered", seconds: 120) { uploader.statistics.delivered == 1 }
        #expect(server.collector.metrics.snapshot.duplicates >= 1, "the re-sent segment was already stored")
        #expect(server.collector.metrics.snapshot.accepted == 1)
        #expect(try await Self.countedRequests(server.baseURL) == ["/once": 25])
        await uploader.stop()
    }

    @Test("finishAndSend() cuts and delivers the current segment before it returns, whatever the cadence")
    func finishAndSend() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let server = try await RunningCollector.start(try Self.collector(target))
        defer { Task { await server.stop() } }
        let writer = TraceFileWriter(configuration: .init(directory: source.path, producer: "now"))
        defer { writer.close() }
        let uploader = Self.uploader(writer, server.uploadURL, segment: .seconds(3600))
        uploader.start()
        for event in Self.requests(7, route: "/now") { writer.append(event) }
        await uploader.finishAndSend()
        #expect(uploader.statistics.delivered == 1)
        #expect(try await Self.countedRequests(server.baseURL) == ["/now": 7])
        await uploader.finishAndSend()
        #expect(uploader.statistics.delivered == 1, "nothing new: nothing sent")
        await uploader.stop()
        await uploader.finishAndSend()  // not running: returns at once
    }

    @Test("finishCurrentFile() returns the finished, read-only file, or nil when nothing was appended since")
    func writerFinishesOnRequest() throws {
        let source = TemporaryDirectory()
        let writer = TraceFileWriter(configuration: .init(directory: source.path, producer: "seg"))
        defer { writer.close() }
        #expect(writer.finishCurrentFile() == nil)
        for event in Self.requests(3, route: "/x") { writer.append(event) }
        let path = try #require(writer.finishCurrentFile())
        #expect(writer.activeFilePath == nil)
        #expect(FileStatus(path: path) != nil)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode & 0o222 == 0, "finished files are read-only")
        var requests = 0
        _ = TraceFileReader(path: path).forEachRawLine { line, _ in
            if String(decoding: line, as: UTF8.self).contains(#""type":"request""#) { requests += 1 }
            return true
        }
        #expect(requests == 3)
        #expect(writer.finishCurrentFile() == nil)
    }
}
