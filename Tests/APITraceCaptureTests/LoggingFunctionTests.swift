import APITraceCapture
import APITraceTesting
import Logging
import Testing

@Suite("Pluggable logging function and the swift-log bridge")
struct LoggingFunctionTests {
    @Test("levels filter, off turns everything off, messages are built only when enabled")
    func levelsAndSwitch() {
        let collector = LogCollector()
        let tracer = TestTracer(configuration: .init(logging: collector.function(minimumLevel: .warning))).tracer
        tracer.log(.debug, "hidden")
        tracer.log(.warning, "shown", metadata: ["k": "v"])
        tracer.log(.critical, "also shown")
        #expect(collector.records.map(\.message) == ["shown", "also shown"])
        #expect(collector.records.first?.metadata == ["k": "v"])
        #expect(collector.records.first?.formatted == "apitrace warning: shown k=v")

        var off = collector.function(minimumLevel: .trace)
        off.isOn = false
        let quiet = TestTracer(configuration: .init(logging: off)).tracer
        quiet.log(.critical, { () -> String in Issue.record("message built while off"); return "x" }())
        #expect(collector.records.count == 2)
        #expect(!LoggingFunction.disabled.isEnabled(.critical))
        #expect(LoggingFunction.stderr.isEnabled(.warning))
        #expect(!LoggingFunction.stderr.isEnabled(.info))
    }

    @Test("TraceLogHandler records swift-log lines as log events with metadata and source, redacted")
    func logHandlerRecords() throws {
        let traces = TestTracer()
        var logger = Logger(label: "com.example.api") { label in TraceLogHandler(label: label, tracer: traces.tracer) }
        logger[metadataKey: "client"] = "ios"
        logger.debug("below the handler's level")
        logger.warning("retrying https://api.example.com/a?token=t0k3n", metadata: ["attempt": "2"])
        #expect(traces.events.count == 1)
        let log = try #require(traces.logs.first)
        #expect(log.level == "warning")
        #expect(log.message == "retrying https://api.example.com/a?token=[REDACTED]")
        #expect(log.metadata == ["client": "ios", "attempt": "2"])
        #expect(log.source == "com.example.api")
    }

    @Test("the swift-log preset forwards apitrace's own lines to a Logger")
    func forwardsToSwiftLog() throws {
        // The receiving logger is itself bridged back into a second tracer, so both directions run for real.
        let received = TestTracer()
        var logger = Logger(label: "app") { label in TraceLogHandler(label: label, tracer: received.tracer) }
        logger.logLevel = .debug
        let tracer = TestTracer(configuration: .init(logging: .swiftLog(logger))).tracer
        tracer.log(.trace, "too fine for the logger")
        tracer.log(.debug, "GET /apps -> 200", metadata: ["route": "/apps"])
        tracer.recordError(NewsError.offline)
        let lines = received.logs
        #expect(lines.map(\.level) == ["debug", "error"])
        #expect(lines.first?.message == "GET /apps -> 200")
        #expect(lines.first?.metadata == ["route": "/apps"])
        #expect(lines.last?.message.contains("NewsError.offline") == true)
    }
}
