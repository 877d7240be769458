public import APITraceFormat

/// One event of every type, with every field set, and with only the required fields.
public let everyEventType: [TraceEvent] = {
    let t = TraceTimestamp(millisecondsSince1970: 1_795_341_600_123)  // 2026-11-22T10:00:00.123Z
    return [
        TraceEvent(timestamp: t, session: "s-1", traceID: "4bf92f3577b34da6a3ce929d0e0e4736", .request(.init(
            method: "GET", route: "/apps/{id}", host: "api.example.com", status: 200, durationMs: 42.125,
            bytesIn: 1234, bytesOut: 0, error: nil, attempt: 1, sampleRate: 0.25))),
        TraceEvent(timestamp: t, .request(.init(method: "POST", route: "/news", durationMs: 3000, error: "URLError.timedOut", attempt: 3))),
        TraceEvent(timestamp: t, .request(.init(
            method: "GET", route: "/news", status: 200, durationMs: 88.5, timing: .init(
                dnsMs: 4.25, connectMs: 31, tlsMs: 19.5, firstByteMs: 70.125, networkProtocol: "h2", reusedConnection: false)))),
        TraceEvent(timestamp: t, .request(.init(
            method: "GET", route: "/news", status: 200, durationMs: 12, timing: .init(firstByteMs: 9, reusedConnection: true)))),
        TraceEvent(timestamp: t, session: "s-1", .decodeFailure(.init(
            route: "/apps", entity: "App", kind: .keyNotFound, path: "data.apps[3].stability", key: "stability",
            message: "No value associated with key \"stability\"."))),
        TraceEvent(timestamp: t, .decodeFailure(.init(entity: "News", kind: .dataCorrupted, path: "", message: "The given data was not valid JSON."))),
        TraceEvent(timestamp: t, .error(.init(
            identity: "NewsError.offline", message: "The device is offline\nretry later \u{1F4F5}",
            userInfo: ["screen": "news", "quote\"d": "back\\slash\ttab"], underlying: ["URLError.notConnectedToInternet"],
            route: "/news", file: "NewsRepository.swift", line: 42, suppressed: 7))),
        TraceEvent(timestamp: t, .error(.init(identity: "NSCocoaErrorDomain#4", message: ""))),
        TraceEvent(timestamp: t, .sse(.init(phase: .open, route: "/news/stream", attempt: 1, status: 200, durationMs: 12.5))),
        TraceEvent(timestamp: t, .sse(.init(phase: .close, route: "/news/stream", reason: "network_error", events: 17, durationMs: 60000))),
        TraceEvent(timestamp: t, .sse(.init(phase: .reconnect, route: "/news/stream", attempt: 2, delayMs: 1500, lastEventID: "42"))),
        TraceEvent(timestamp: t, .sse(.init(phase: .fail, route: "/news/stream", reason: "http_status", status: 500))),
        TraceEvent(timestamp: t, .log(.init(level: "warning", message: "slow response", metadata: ["ms": "2300"], source: "NewsClient"))),
        TraceEvent(timestamp: t, .dropped(.init(count: 12, reason: "buffer_full"))),
    ]
}()
