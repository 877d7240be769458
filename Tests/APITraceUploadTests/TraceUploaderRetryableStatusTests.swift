import APITraceTestSupport
import APITraceCollectorTestSupport
import APITraceServerTestSupport
import APITraceCollector
import APITraceFormat
import APITraceUpload
import Foundation
import Hummingbird
import Testing

extension TraceUploaderTests {
    @Test("the one retryable rule: 408 and statuses from 600 up are retried like a 5xx, and every file is stored once")
    func retryableStatusesAreRetried() async throws {
        let source = TemporaryDirectory(), target = TemporaryDirectory()
        // Each status fails (500 and up) or asks to be tried again (408): RequestOutcome.isRetryable.
        let plan = FaultPlan([600, 408, 799, 999].map { .init(status: $0) })
        let server = try await RunningCollector.start(try Self.collector(target)) { $0.add(middleware: FaultInjection(plan: plan)) }
        defer { Task { await server.stop() } }
        let sent = Self.contents(TraceFiles.writeFinished(3, to: source.path))
        let uploader = Self.uploader(source, server.uploadURL)
        uploader.start()
        try await waitUntil("3 deliveries") { uploader.statistics.delivered == 3 }
        await uploader.stop()
        #expect(uploader.statistics.retries == 4)
        #expect(TraceFiles.allFiles(under: source.path).filter { $0.contains("rejected") }.isEmpty)
        Self.expectStoredExactlyOnce(sent, in: target)
    }
}
