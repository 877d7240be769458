import APITraceCapture
import APITraceDistributedTracing
import APITraceFormat
import APITraceTestSupport
import APITraceTesting
import Foundation
import Testing
import Tracing

/// A span's event is built on the recorder's drain thread, not on the thread that ended it: what
/// a flush guarantees, the order, the timestamps and the bound.
@Suite("RequestSpanTracer: events built off the caller's thread")
struct DeferredRecordingTests {
    @Test("after a flush every ended span's event is in the sink, in the order the spans ended, from one thread or several")
    func completeAndOrdered() async throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        for i in 0..<500 {
            tracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["http.route"] = "/one/\(i)"
                span.attributes["http.response.status_code"] = 200
            }
        }
        traces.tracer.flush()
        #expect(traces.sink.events.requests.map(\.route) == (0..<500).map { "/one/\($0)" })

        // Four threads ending 250 spans each: all 1,000 arrive, each thread's in its own order.
        try await offPool {
            onThreads(4) { thread in
                for i in 0..<250 {
                    let span = tracer.startSpan("GET", ofKind: .client)
                    span.attributes["http.request.method"] = "GET"
                    span.attributes["http.route"] = "/t\(thread)/\(i)"
                    span.attributes["http.response.status_code"] = 200
                    span.end()
                }
            }
            traces.tracer.flush()
        }
        let routes = traces.sink.events.requests.map(\.route).dropFirst(500)
        #expect(routes.count == 1000)
        for thread in 0..<4 {
            #expect(routes.filter { $0.hasPrefix("/t\(thread)/") } == (0..<250).map { "/t\(thread)/\($0)" })
        }
        #expect(traces.sink.events.allSatisfy { $0.type == "request" })
    }

    @Test("ts is the span's end and duration_ms its start to end, even when the event is built long after")
    func timesAreTheSpans() async throws {
        // The drain thread is held up by the first span's hook for 300 ms, so the measured span's
        // event is built at least 200 ms after it ended.
        let hookStarted = DispatchSemaphore(value: 0)
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.eventHook = { event in
            if case .request(let request) = event.payload, request.route == "/slow" {
                hookStarted.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
            return event
        }
        let traces = TestTracer(configuration: configuration)
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        let clock = ContinuousClock()
        let measured = try await offPool {
            tracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["http.route"] = "/slow"
                span.attributes["http.response.status_code"] = 200
            }
            hookStarted.wait()
            let beforeStart = clock.now
            let span = tracer.startSpan("GET", ofKind: .client)
            let afterStart = clock.now
            span.attributes["http.request.method"] = "GET"
            span.attributes["http.route"] = "/measured"
            span.attributes["http.response.status_code"] = 200
            Thread.sleep(forTimeInterval: 0.05)
            let wallBeforeEnd = Date()
            let beforeEnd = clock.now
            span.end()
            let afterEnd = clock.now
            let wallAfterEnd = Date()
            return (beforeStart, afterStart, beforeEnd, afterEnd, wallBeforeEnd, wallAfterEnd)
        }
        let (beforeStart, afterStart, beforeEnd, afterEnd, wallBeforeEnd, wallAfterEnd) = measured
        let events = traces.events   // returns once the drain built the event
        let drained = Date()
        let event = try #require(events.first { $0.request?.route == "/measured" })
        let request = try #require(event.request)
        func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }
        // duration_ms lies between the shortest and longest interval the test itself saw.
        #expect(request.durationMs >= milliseconds(afterStart.duration(to: beforeEnd)))
        #expect(request.durationMs <= milliseconds(beforeStart.duration(to: afterEnd)))
        #expect(request.durationMs >= 50)
        // ts (whole milliseconds) is the end: between the wall-clock reads around end(), a millisecond
        // of rounding either side; not when the event was built, 200 ms or more later.
        let ts = event.timestamp.date
        #expect(ts >= wallBeforeEnd.addingTimeInterval(-0.001))
        #expect(ts <= wallAfterEnd.addingTimeInterval(0.001))
        #expect(drained.timeIntervalSince(ts) >= 0.2)
    }

    @Test("past 10,000 ended spans waiting, the rest are counted in a dropped event, not kept and not blocking")
    func boundedQueue() async throws {
        let release = DispatchSemaphore(value: 0)
        let hookStarted = DispatchSemaphore(value: 0)
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.eventHook = { event in
            if case .request(let request) = event.payload, request.route == "/block" {
                hookStarted.signal()
                release.wait()
            }
            return event
        }
        let traces = TestTracer(configuration: configuration, capacity: 20_000)
        let recorder = traces.tracer
        let tracer = RequestSpanTracer(recorder: recorder)
        let request: @Sendable (String) -> Void = { route in
            tracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["http.route"] = route
                span.attributes["http.response.status_code"] = 200
            }
        }
        try await offPool {
            request("/block")
            // The drain is now inside the hook, with nothing else taken: 10,000 wait, 123 are dropped.
            hookStarted.wait()
            for i in 0..<10_123 { request("/queued/\(i)") }
            release.signal()
            recorder.flush()
        }
        let events = traces.sink.events
        let routes = events.requests.map(\.route)
        #expect(routes == ["/block"] + (0..<10_000).map { "/queued/\($0)" })
        let dropped = events.dropped
        #expect(dropped == [TraceEvent.Dropped(count: 123, reason: "span_queue_full")])
        // Counted once: a later drain reports nothing more.
        request("/after")
        recorder.flush()
        #expect(traces.sink.events.count == events.count + 1)
    }

    @Test("flushes from many threads at once while spans end: each returns with every span ended before it recorded")
    func concurrentFlushes() async throws {
        let traces = TestTracer()
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        let ended = Locked(0)
        let shortfalls = Locked([String]())
        try await offPool {
            onThreads(12) { worker in
                if worker < 4 {
                    for i in 0..<500 {
                        tracer.withSpan("GET", ofKind: .client) { span in
                            span.attributes["http.request.method"] = "GET"
                            span.attributes["http.route"] = "/w\(worker)/\(i)"
                            span.attributes["http.response.status_code"] = 200
                        }
                        ended.withLock { $0 += 1 }
                    }
                } else {
                    for _ in 0..<50 {
                        let before = ended.withLock { $0 }
                        traces.tracer.flush()
                        let recorded = traces.sink.events.count
                        if recorded < before { shortfalls.withLock { $0.append("\(recorded) < \(before)") } }
                    }
                }
            }
        }
        #expect(shortfalls.withLock { $0 }.isEmpty)
        let routes = traces.requests.map(\.route)
        #expect(routes.count == 2000)
        #expect(Set(routes).count == 2000)
        for worker in 0..<4 {
            #expect(routes.filter { $0.hasPrefix("/w\(worker)/") } == (0..<500).map { "/w\(worker)/\($0)" })
        }
    }

    @Test("with no flush, events reach the sink on their own: while spans keep ending and after the drain thread went to sleep")
    func arrivesWithoutFlush() async throws {
        let traces = TestTracer(configuration: .init(logging: .disabled))
        let recorder = traces.tracer
        let tracer = RequestSpanTracer(recorder: recorder)
        let request: @Sendable (String) -> Void = { route in
            tracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["http.route"] = route
                span.attributes["http.response.status_code"] = 200
            }
        }
        request("/first")
        try await waitUntil("the first span's event") { traces.sink.events.count == 1 }
        // Past the second the drain thread keeps looking: it sleeps, and the next span wakes it.
        try await Task.sleep(for: .milliseconds(1500))
        request("/after-a-pause")
        try await waitUntil("the event of the span after the pause") { traces.sink.events.count == 2 }
        #expect(traces.sink.events.requests.map(\.route) == ["/first", "/after-a-pause"])
    }

    @Test("an event hook that flushes the same recorder does not wait on itself", .timeLimit(.minutes(1)))
    func flushInsideHook() async throws {
        let recorderBox = Locked<APITracer?>(nil)
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.eventHook = { event in
            recorderBox.withLock { $0 }?.flush()
            return event
        }
        let traces = TestTracer(configuration: configuration)
        recorderBox.withLock { $0 = traces.tracer }
        let tracer = RequestSpanTracer(recorder: traces.tracer)
        try await offPool {
            for route in ["/a", "/b"] {
                tracer.withSpan("GET", ofKind: .client) { span in
                    span.attributes["http.request.method"] = "GET"
                    span.attributes["http.route"] = route
                    span.attributes["http.response.status_code"] = 200
                }
            }
        }
        #expect(traces.requests.map(\.route) == ["/a", "/b"])
        recorderBox.withLock { $0 = nil }
    }

    #if os(Linux)
    @Test("a recorder dropped while its spans wait: their events still arrive and its drain thread ends")
    func droppedRecorder() async throws {
        let sink = InMemoryTraceSink()
        // The drain thread's task folder, `/proc/self/task/<tid>`, read where the event hook runs.
        let drainThread = Locked<String?>(nil)
        var configuration = APITracer.Configuration(logging: .disabled)
        configuration.eventHook = { event in
            let task = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last
            drainThread.withLock { $0 = $0 ?? task.map { "/proc/self/task/\($0)" } }
            return event
        }
        do {
            // The last reference to the recorder is then the drain thread's own, released there.
            let tracer = RequestSpanTracer(recorder: APITracer(sinks: [sink], configuration: configuration))
            for i in 0..<100 {
                tracer.withSpan("GET", ofKind: .client) { span in
                    span.attributes["http.request.method"] = "GET"
                    span.attributes["http.route"] = "/dropped/\(i)"
                }
            }
        }
        try await waitUntil("the queued spans' events") { sink.events.count == 100 }
        let thread = try #require(drainThread.withLock { $0 })
        try await waitUntil("the drain thread (\(thread)) to end") { !FileManager.default.fileExists(atPath: thread) }
    }
    #endif

    @Test("withTestTracer: a span's event is among the requests as soon as the span ended, no flush written")
    func testTracerDrains() async throws {
        await withTestTracer { traces in
            let tracer = RequestSpanTracer()   // recorder: .shared, the test tracer in this scope
            tracer.withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["url.path"] = "/apps/7"
                span.attributes["http.response.status_code"] = 200
            }
            #expect(traces.requests.map(\.route) == ["/apps/{id}"])
        }
    }
}

/// Runs `body` on `count` threads of its own at once (ids 0 to `count - 1`), waiting for all.
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for id in 0..<count {
        group.enter()
        Thread.detachNewThread {
            body(id)
            group.leave()
        }
    }
    group.wait()
}
