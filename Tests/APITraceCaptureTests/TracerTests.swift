import APITraceCapture
import APITraceTesting
import Testing

@Suite("APITracer configuration")
struct TracerTests {
    @Test("the event hook can rewrite or drop any event, after redaction")
    func hook() {
        let traces = TestTracer(configuration: .init(logging: .disabled, eventHook: { event in
            var event = event
            switch event.payload {
            case .log: return nil
            case .error(var error):
                error.userInfo["build"] = "42"
                event.payload = .error(error)
                return event
            default: return event
            }
        }))
        traces.tracer.record(TraceEvent(.log(.init(level: "info", message: "dropped"))))
        traces.tracer.recordError(NewsError.offline, userInfo: ["password": "hunter2"])
        #expect(traces.events.count == 1)
        #expect(traces.errors.first?.userInfo == ["password": "[REDACTED]", "build": "42"])
    }

    @Test("the session id is stamped on events that have none")
    func session() {
        let traces = TestTracer(configuration: .init(logging: .disabled, session: "s-7"))
        traces.tracer.record(TraceEvent(.log(.init(level: "info", message: "a"))))
        traces.tracer.record(TraceEvent(session: "own", .log(.init(level: "info", message: "b"))))
        #expect(traces.events.map(\.session) == ["s-7", "own"])
    }

    @Test("instances are independent; several sinks all get each event")
    func instances() {
        let first = InMemoryTraceSink()
        let second = InMemoryTraceSink()
        let both = APITracer(sinks: [first, second], configuration: .init(logging: .disabled))
        let other = TestTracer()
        both.record(TraceEvent(.log(.init(level: "info", message: "x"))))
        #expect(first.events.count == 1)
        #expect(second.events.count == 1)
        #expect(other.events.isEmpty)
        _ = other
    }
}
