import APITraceFormat
import Foundation

/// The event-by-event state of ``SyntheticTraceGenerator`` for one file.
struct SyntheticTraffic {
    private var random: SplitMix64
    private var now: Double
    private let traceStart: Int64
    private let span: Int64
    private let meanIntervalMs: Double
    private let sampleRate: Double?
    private var session: String
    private var eventsInSession = 0
    private var ssePhase = 0
    private var sseAttempt = 1
    private var sseEventID = 0

    init(seed: UInt64, start: TraceTimestamp, traceStart: TraceTimestamp, span: Int64, meanIntervalMs: Double, sampleRate: Double?) {
        random = SplitMix64(seed: seed)
        now = Double(start.millisecondsSince1970)
        self.traceStart = traceStart.millisecondsSince1970
        self.span = max(1, span)
        self.meanIntervalMs = meanIntervalMs
        self.sampleRate = sampleRate
        session = ""
        session = newSession()
    }

    private struct Route: Sendable {
        var method: String
        var route: String
        var weight: Double
        var medianMs: Double
        var serverErrorRate: Double
    }

    private static let routes: [Route] = [
        Route(method: "GET", route: "/apps", weight: 20, medianMs: 120, serverErrorRate: 0.015),
        Route(method: "GET", route: "/apps/{id}", weight: 25, medianMs: 60, serverErrorRate: 0.01),
        Route(method: "GET", route: "/apps/{id}/reviews", weight: 10, medianMs: 180, serverErrorRate: 0.02),
        Route(method: "POST", route: "/apps/{id}/install", weight: 5, medianMs: 350, serverErrorRate: 0.08),
        Route(method: "GET", route: "/news", weight: 15, medianMs: 90, serverErrorRate: 0.01),
        Route(method: "GET", route: "/news/{id}", weight: 10, medianMs: 45, serverErrorRate: 0.005),
        Route(method: "GET", route: "/search", weight: 8, medianMs: 240, serverErrorRate: 0.03),
        Route(method: "PUT", route: "/me/settings", weight: 3, medianMs: 150, serverErrorRate: 0.01),
        Route(method: "DELETE", route: "/me/sessions/{id}", weight: 2, medianMs: 80, serverErrorRate: 0.01),
        Route(method: "GET", route: "/apps/{id}/screenshots", weight: 2, medianMs: 70, serverErrorRate: 0.01),
    ]
    private static let totalWeight = routes.reduce(0) { $0 + $1.weight }
    private static let transportErrors = ["URLError.timedOut", "URLError.networkConnectionLost", "URLError.notConnectedToInternet"]
    private static let recordedErrors: [(String, String, String?)] = [
        ("NewsError.offline", "The device is offline; showing cached news", "/news"),
        ("AppStoreError.rateLimited", "Too many requests, retry after 30 s", "/apps/{id}/install"),
        ("NSURLErrorDomain#-1001", "The request timed out.", "/search"),
        ("KeychainError.itemNotFound", "No token in the keychain for account default", nil),
        ("SyncError.conflict", "Settings changed on another device", "/me/settings"),
    ]

    mutating func next() -> TraceEvent {
        now += random.exponential(mean: meanIntervalMs)
        let time = TraceTimestamp(millisecondsSince1970: Int64(now))
        eventsInSession += 1
        if eventsInSession > 400 && random.unit() < 0.01 {
            session = newSession()
            eventsInSession = 0
        }
        let roll = random.unit()
        let payload: TraceEvent.Payload
        var traceID: String?
        switch roll {
        case ..<0.82:
            // Not every request carries a W3C trace id: only those the app traces.
            if random.unit() < 0.6 { traceID = hex(16) }
            payload = .request(request(at: time))
        case ..<0.85: payload = .decodeFailure(decodeFailure())
        case ..<0.87: payload = .error(recordedError())
        case ..<0.91: payload = .sse(sse())
        case ..<0.997: payload = .log(log())
        default: payload = .dropped(.init(count: 1 + random.int(below: 50), reason: random.unit() < 0.8 ? "buffer_full" : "write_failed"))
        }
        return TraceEvent(timestamp: time, session: session, traceID: traceID, payload)
    }

    private mutating func request(at time: TraceTimestamp) -> TraceEvent.Request {
        var pick = random.unit() * Self.totalWeight
        var route = Self.routes[0]
        for r in Self.routes {
            pick -= r.weight
            if pick <= 0 { route = r; break }
        }
        // An incident in the middle of the span: five times the server errors.
        let offset = Double(time.millisecondsSince1970 - traceStart) / Double(span)
        let incident = offset > 0.45 && offset < 0.55 ? 5.0 : 1.0
        let roll = random.unit()
        var status: Int? = 200
        var error: String?
        var duration = route.medianMs * exp(0.6 * random.normal())
        if roll < 0.012 {
            status = nil
            error = Self.transportErrors[random.int(below: Self.transportErrors.count)]
            if error == "URLError.timedOut" { duration = 30_000 + random.unit() * 50 }
        } else if roll < 0.012 + route.serverErrorRate * incident {
            status = [500, 502, 503, 503][random.int(below: 4)]
            duration *= 1.5
        } else if roll < 0.012 + route.serverErrorRate * incident + 0.035 {
            status = [400, 401, 404, 404, 429][random.int(below: 5)]
            error = nil
        } else {
            status = route.method == "POST" ? 201 : (route.method == "DELETE" ? 204 : (random.unit() < 0.05 ? 304 : 200))
        }
        let success = (status ?? 500) < 400
        return TraceEvent.Request(
            method: route.method, route: route.route, host: random.unit() < 0.9 ? "api.example.com" : "cdn.example.com",
            status: status, durationMs: (duration * 1000).rounded() / 1000,
            bytesIn: status == nil ? nil : Int64(200 + random.int(below: 48_000)),
            bytesOut: route.method == "GET" ? nil : Int64(100 + random.int(below: 1900)),
            error: error, attempt: status == nil && random.unit() < 0.3 ? 2 : 1,
            sampleRate: success ? sampleRate : nil)
    }

    private mutating func decodeFailure() -> TraceEvent.DecodeFailure {
        let roll = random.unit()
        let index = random.unit() < 0.8 ? 3 : random.int(below: 20)
        if roll < 0.7 {
            return .init(
                route: "/apps", entity: "App", kind: .keyNotFound, path: "data.apps[\(index)].stability", key: "stability",
                message: "No value associated with key CodingKeys(stringValue: \"stability\", intValue: nil) (\"stability\").")
        } else if roll < 0.9 {
            return .init(
                route: "/news", entity: "News", kind: .typeMismatch, path: "data.items[\(index)].publishedAt", key: "publishedAt",
                message: "Expected to decode Double but found a string instead.")
        }
        return .init(
            route: "/apps/{id}/reviews", entity: "Review", kind: .valueNotFound, path: "data.reviews[\(index)].rating",
            key: "rating", message: "Expected Int value but found null instead.")
    }

    private mutating func recordedError() -> TraceEvent.RecordedError {
        let pick = random.unit()
        let e = Self.recordedErrors[pick < 0.4 ? 0 : pick < 0.6 ? 1 : pick < 0.8 ? 2 : pick < 0.93 ? 3 : 4]
        return .init(
            identity: e.0, message: e.1, userInfo: ["screen": e.2 == nil ? "launch" : "main"], route: e.2,
            file: "Client.swift", line: 42 + random.int(below: 200), suppressed: random.unit() < 0.1 ? 1 + random.int(below: 5) : nil)
    }

    private mutating func sse() -> TraceEvent.SSE {
        let route = "/news/stream"
        switch ssePhase {
        case 0:
            ssePhase = 1
            return .init(phase: .open, route: route, attempt: sseAttempt, status: 200, durationMs: ((20 + random.unit() * 200) * 1000).rounded() / 1000)
        case 1:
            let reasons = ["end_of_stream", "network_error", "network_error", "idle_timeout"]
            let events = random.int(below: 200)
            sseEventID += events
            ssePhase = 2
            sseAttempt = 1
            return .init(
                phase: .close, route: route, lastEventID: String(sseEventID), reason: reasons[random.int(below: reasons.count)],
                events: events, durationMs: (random.exponential(mean: 120_000) * 1000).rounded() / 1000)
        case 2 where random.unit() < 0.03:
            ssePhase = 0
            sseAttempt = 1
            return .init(phase: .fail, route: route, reason: random.unit() < 0.5 ? "http_status" : "network_error", status: 503)
        default:
            // A reconnect; one in five attempts fails and is followed by another, backing off.
            sseAttempt += 1
            ssePhase = random.unit() < 0.2 ? 2 : 0
            let delay = min(30_000, 1000 * pow(2, Double(min(sseAttempt, 7) - 2))) * (0.5 + random.unit() * 0.5)
            let event = TraceEvent.SSE(phase: .reconnect, route: route, attempt: sseAttempt, delayMs: delay.rounded(), lastEventID: String(sseEventID))
            return event
        }
    }

    private mutating func log() -> TraceEvent.Log {
        let levels = ["debug", "info", "info", "info", "notice", "warning", "error"]
        let level = levels[random.int(below: levels.count)]
        return .init(level: level, message: "screen appeared", metadata: ["screen": "news"], source: "SampleApp")
    }

    private mutating func newSession() -> String { "s-" + hex(6) }

    private mutating func hex(_ bytes: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes * 2)
        var word = random.next()
        for i in 0..<bytes {
            if i % 8 == 0 && i > 0 { word = random.next() }
            let b = UInt8(truncatingIfNeeded: word >> (UInt64(i % 8) * 8))
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
