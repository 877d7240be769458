import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceCollector
import APITraceFormat
import APITraceUpload
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import HTTPTypes
import Testing

/// The uploader deletes a file only on the real collector's own answer: a captive portal's 200, a
/// proxy's 204 and a redirect (even one to the real collector) leave the file in place.
@Suite("Uploader trusts only the collector")
struct UploaderTrustTests {
    static let token = "secret-token"

    /// The real collector at /v1/traces, and beside it on the same server what a captive portal or proxy answers.
    static func start(_ target: TemporaryDirectory, tokens: [String] = [token], seen: Recorded<String>? = nil) async throws -> RunningCollector {
        try await RunningCollector.start(try TraceCollector(configuration: .init(directory: target.path, tokens: tokens))) { router in
            router.post("/portal") { _, _ in
                Response(status: .ok, headers: [.contentType: "text/html"],
                         body: .init(byteBuffer: ByteBuffer(string: "<html><body>Welcome! Log in to use the Wi-Fi</body></html>")))
            }
            router.post("/lying-proxy") { _, _ in
                // Looks like the collector's answer, but names no file with this content.
                Response(status: .created, body: .init(byteBuffer: ByteBuffer(string: "stored dt=2026-11-22/x-0000000000000000.jsonl.gz\n")))
            }
            router.post("/empty") { _, _ in Response(status: .noContent) }
            router.post("/moved") { _, _ in
                Response(status: .temporaryRedirect, headers: [.location: "/v1/traces"])
            }
            router.post("/headers") { request, _ in
                seen?.append(request.headers[HTTPField.Name("X-App-Build")!] ?? "none")
                return Response(status: .serviceUnavailable, headers: [.retryAfter: "60"])
            }
        }
    }

    static func uploader(_ source: TemporaryDirectory, _ url: String, events: Recorded<TraceUploader.Event>) -> TraceUploader {
        TraceUploader(configuration: .init(
            directory: source.path, endpoint: URL(string: url)!, token: token, minimumFileAge: .zero,
            scanInterval: .milliseconds(50), retry: RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(100)),
            diagnostics: { _ in }, onEvent: { events.append($0) }))
    }

    @Test("a 2xx that is not the collector's receipt, or a redirect, keeps the file and sends nothing elsewhere",
          arguments: ["/portal", "/lying-proxy", "/empty", "/moved"])
    func untrustedAnswerKeepsFile(_ path: String) async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let server = try await Self.start(target)
        defer { Task { await server.stop() } }
        let files = TraceFiles.writeFinished(1, to: source.path)
        let events = Recorded<TraceUploader.Event>()
        let uploader = Self.uploader(source, server.baseURL + path, events: events)
        uploader.start()
        try await waitUntil("three attempts") { events.all.count >= 3 }
        await uploader.stop()
        #expect(source.traceFiles == files)
        #expect(uploader.statistics.delivered == 0 && uploader.statistics.rejected == 0)
        #expect(events.all.allSatisfy { if case .willRetry = $0 { true } else { false } }, "\(events.all)")
        // A followed redirect would have stored the file.
        #expect(TraceFiles.allFiles(under: target.path).isEmpty)
        #expect(server.collector.metrics.snapshot.accepted == 0)
        if path == "/moved" {
            #expect(events.all.contains { if case .willRetry(_, _, let reason) = $0 { reason.contains("redirect to /v1/traces not followed") } else { false } })
        }
    }

    @Test("the same file sent to the collector itself is delivered and deleted (the control for the test above)")
    func collectorReceiptDeletes() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let server = try await Self.start(target)
        defer { Task { await server.stop() } }
        let sent = TraceFiles.writeFinished(2, to: source.path).map { TraceFiles.sha256Hex([UInt8](FileManager.default.contents(atPath: $0)!)) }
        let events = Recorded<TraceUploader.Event>()
        let uploader = Self.uploader(source, server.uploadURL, events: events)
        uploader.start()
        try await waitUntil("two deliveries") { uploader.statistics.delivered == 2 }
        await uploader.stop()
        #expect(source.traceFiles.isEmpty)
        // Both files are in the store, whole (appended to their producer's file or stored alone).
        #expect(Set(TraceFiles.stored(under: target.path).keys) == Set(sent))
    }

    @Test("a token provider is told which token was refused, and its fresh token delivers the file")
    func refreshingToken() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let server = try await Self.start(target, tokens: ["fresh-token"])
        defer { Task { await server.stop() } }
        TraceFiles.writeFinished(1, to: source.path)
        let asked = Recorded<String>()
        let provider = UploadTokenProvider { refused in
            asked.append(refused ?? "-")
            return refused == nil ? "expired-token" : "fresh-token"
        }
        let uploader = TraceUploader(configuration: .init(
            directory: source.path, endpoint: URL(string: server.uploadURL)!, tokenProvider: provider, minimumFileAge: .zero,
            scanInterval: .milliseconds(50), retry: RetryPolicy(initial: .milliseconds(20), maximum: .seconds(3600)),
            diagnostics: { _ in }))
        uploader.start()
        // With a constant token the next attempt would come only after the longest backoff (an hour here).
        try await waitUntil("the delivery", seconds: 120) { uploader.statistics.delivered == 1 }
        await uploader.stop()
        #expect(source.traceFiles.isEmpty)
        #expect(asked.all.first == "-")
        #expect(asked.all.dropFirst().allSatisfy { $0 == "expired-token" })
        #expect(server.collector.metrics.snapshot.rejected == [.invalidToken: 1])
    }

    @Test("the app's URLSession configuration is the one requests go through")
    func suppliedSessionConfiguration() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        let seen = Recorded<String>()
        let server = try await Self.start(target, seen: seen)
        defer { Task { await server.stop() } }
        TraceFiles.writeFinished(1, to: source.path)
        var configuration = TraceUploader.Configuration(
            directory: source.path, endpoint: URL(string: server.baseURL + "/headers")!, token: Self.token, minimumFileAge: .zero,
            diagnostics: { _ in })
        configuration.sessionConfiguration = {
            let session = TraceUploader.defaultSessionConfiguration()
            session.httpAdditionalHeaders = ["X-App-Build": "4711"]
            return session
        }
        let uploader = TraceUploader(configuration: configuration)
        uploader.start()
        try await waitUntil("one attempt") { !seen.all.isEmpty }
        await uploader.stop()
        #expect(seen.all.first == "4711")
    }
}
