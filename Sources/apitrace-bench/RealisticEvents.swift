import APITraceFormat
import APITraceSynthetic

/// A deterministic mix of events shaped like a real API client's: mostly requests, some failures.
enum RealisticEvents {
    static func make(count: Int, seed: UInt64 = 42) -> [TraceEvent] {
        var rng = SplitMix64(seed: seed)
        let routes = ["/apps/{id}", "/apps", "/news", "/news/{id}", "/newspapers", "/users/{id}/issues", "/auth/refresh"]
        let hosts = ["api.example.com", "news.example.com"]
        var t: Int64 = 1_795_341_600_000
        return (0..<count).map { i in
            t += Int64(rng.next() % 40)
            let ts = TraceTimestamp(millisecondsSince1970: t)
            let session = "s-\(rng.next() % 500)"
            let roll = rng.next() % 100
            let route = routes[Int(rng.next() % UInt64(routes.count))]
            switch roll {
            case 0..<85:
                let statusRoll = rng.next() % 100
                let status: Int? = statusRoll < 90 ? 200 : statusRoll < 95 ? 404 : statusRoll < 98 ? 503 : nil
                return TraceEvent(timestamp: ts, session: session, .request(.init(
                    method: route.hasPrefix("/auth") ? "POST" : "GET", route: route,
                    host: hosts[Int(rng.next() % 2)], status: status,
                    durationMs: Double(20 + rng.next() % 400) + Double(rng.next() % 1000) / 1000,
                    bytesIn: status == nil ? nil : Int64(200 + rng.next() % 20_000), bytesOut: Int64(rng.next() % 300),
                    error: status == nil ? "URLError.timedOut" : nil, attempt: 1)))
            case 85..<90:
                return TraceEvent(timestamp: ts, session: session, .decodeFailure(.init(
                    route: "/apps", entity: "App", kind: .keyNotFound, path: "data.apps[\(rng.next() % 20)].stability",
                    key: "stability", message: "No value associated with key CodingKeys(stringValue: \"stability\", intValue: nil).")))
            case 90..<93:
                return TraceEvent(timestamp: ts, session: session, .error(.init(
                    identity: "NewsError.offline", message: "The Internet connection appears to be offline.",
                    userInfo: ["screen": "news", "attempt": "\(i % 3)"], route: "/news", file: "NewsRepository.swift", line: 88)))
            case 93..<96:
                let phase: TraceEvent.SSE.Phase = [.open, .close, .reconnect][Int(rng.next() % 3)]
                return TraceEvent(timestamp: ts, session: session, .sse(.init(
                    phase: phase, route: "/news/stream", attempt: Int(1 + rng.next() % 4),
                    delayMs: phase == .reconnect ? Double(1000 + rng.next() % 3000) : nil,
                    lastEventID: "\(i)", reason: phase == .close ? "network_error" : nil,
                    status: phase == .open ? 200 : nil, events: phase == .close ? Int(rng.next() % 50) : nil)))
            default:
                return TraceEvent(timestamp: ts, session: session, .log(.init(
                    level: "info", message: "refreshed feed with \(rng.next() % 30) items", metadata: ["feed": "top"], source: "NewsClient")))
            }
        }
    }
}
