/// One decoded line of a trace file.
public enum TraceLine: Sendable, Equatable {
    /// The file header (`"type":"header"`).
    case header(TraceFileHeader)
    /// An event of a type this library knows.
    case event(TraceEvent)
    /// An event of a type this library does not know (written by a newer producer); skipped by readers.
    case unknown(type: String)

    /// A line that is valid JSON but not a valid trace line, naming the field at fault.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was wrong, e.g. `field "status" is not a number` or `missing field "route"`.
        public var reason: String
        public var description: String { reason }
    }

    /// Decodes one line (without its newline).
    ///
    /// Unknown fields are skipped; a known field with the wrong type, or a missing required field,
    /// throws ``Invalid`` or a `JSONScanner.Error`.
    public static func decode(_ line: UnsafeRawBufferPointer) throws -> TraceLine {
        var fields = Fields()
        var scanner = JSONScanner(line)
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            try fields.read(key: key, from: &scanner)
        }
        guard scanner.isAtEnd() else { throw Invalid(reason: "text after the JSON object") }
        return try fields.makeLine()
    }

    /// Decodes one line of text.
    public static func decode(_ line: String) throws -> TraceLine {
        var line = line
        return try line.withUTF8 { try decode(UnsafeRawBufferPointer($0)) }
    }
}

/// Every field any line type may carry, gathered in one pass whatever their order.
private struct Fields {
    var type: String?
    var ts: TraceTimestamp?
    var session, traceID, spanID: String?
    var port: Int?
    // header
    var format, producer, app, appVersion, host: String?
    var version: Int?
    var started: TraceTimestamp?
    // shared
    var route, message, error, reason: String?
    var status, attempt, line, suppressed, events, count: Int?
    var durationMs, delayMs, sampleRate: Double?
    // request
    var method: String?
    var bytesIn, bytesOut: Int64?
    var dnsMs, connectMs, tlsMs, ttfbMs: Double?
    var networkProtocol: String?
    var reused: Bool?
    // decode failure
    var entity, kind, path, key: String?
    // error
    var identity, file: String?
    var userInfo: [String: String]?
    var underlying: [String]?
    // sse
    var phase, lastEventID: String?
    // log
    var level, source: String?
    var metadata: [String: String]?

    mutating func read(key k: UnsafeRawBufferPointer, from s: inout JSONScanner) throws {
        if s.consumeNull() { return }
        // Static helpers: a nested function that touched `self` would copy this whole struct per field.
        func str() throws -> String { try Fields.string(k, &s) }
        typealias L = TraceRecord.Limits
        func int(_ range: ClosedRange<Int64> = Int64.min...Int64.max) throws -> Int { try Fields.int(k, &s, range) }
        func dbl(_ range: ClosedRange<Double>) throws -> Double { try Fields.double(k, &s, range) }
        func time() throws -> TraceTimestamp { try Fields.time(k, &s) }
        switch k.count {
        case 2 where k.equals("ts"): ts = try time()
        case 3 where k.equals("key"): key = try str()
        case 4:
            if k.equals("type") { type = try str() }
            else if k.equals("host") { host = try str() }
            else if k.equals("kind") { kind = try str() }
            else if k.equals("path") { path = try str() }
            else if k.equals("file") { file = try str() }
            else if k.equals("line") { line = try int() }
            else if k.equals("port") { port = try int(1...65535) }
            else { try s.skipValue() }
        case 5:
            if k.equals("route") { route = try str() }
            else if k.equals("error") { error = try str() }
            else if k.equals("phase") { phase = try str() }
            else if k.equals("level") { level = try str() }
            else if k.equals("count") { count = try int(L.count) }
            else { try s.skipValue() }
        case 6:
            if k.equals("method") { method = try str() }
            else if k.equals("status") { status = try int(L.status) }
            else if k.equals("entity") { entity = try str() }
            else if k.equals("reason") { reason = try str() }
            else if k.equals("events") { events = try int(L.count) }
            else if k.equals("source") { source = try str() }
            else if k.equals("format") { format = try str() }
            else if k.equals("dns_ms") { dnsMs = try dbl(L.milliseconds) }
            else if k.equals("tls_ms") { tlsMs = try dbl(L.milliseconds) }
            else if k.equals("reused") { reused = try Fields.bool(k, &s) }
            else { try s.skipValue() }
        case 7:
            if k.equals("message") { message = try str() }
            else if k.equals("attempt") { attempt = try int(L.attempt) }
            else if k.equals("session") { session = try str() }
            else if k.equals("version") { version = try int() }
            else if k.equals("started") { started = try time() }
            else if k.equals("ttfb_ms") { ttfbMs = try dbl(L.milliseconds) }
            else if k.equals("span_id") { spanID = try str() }
            else { try s.skipValue() }
        case 8:
            if k.equals("bytes_in") { bytesIn = Int64(try int(L.bytes)) }
            else if k.equals("trace_id") { traceID = try str() }
            else if k.equals("identity") { identity = try str() }
            else if k.equals("delay_ms") { delayMs = try dbl(L.milliseconds) }
            else if k.equals("producer") { producer = try str() }
            else if k.equals("metadata") { metadata = try Fields.stringMap(k, &s) }
            else if k.equals("protocol") { networkProtocol = try str() }
            else { try s.skipValue() }
        case 9:
            if k.equals("bytes_out") { bytesOut = Int64(try int(L.bytes)) }
            else if k.equals("user_info") { userInfo = try Fields.stringMap(k, &s) }
            else { try s.skipValue() }
        case 10:
            if k.equals("suppressed") { suppressed = try int(L.count) }
            else if k.equals("underlying") { underlying = try Fields.typed(k, "an array of strings") { try s.readStringArray() } }
            else if k.equals("connect_ms") { connectMs = try dbl(L.milliseconds) }
            else { try s.skipValue() }
        case 11:
            if k.equals("duration_ms") { durationMs = try dbl(L.milliseconds) }
            else if k.equals("sample_rate") { sampleRate = try dbl(-Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) }
            else if k.equals("app_version") { appVersion = try str() }
            else { try s.skipValue() }
        case 13 where k.equals("last_event_id"): lastEventID = try str()
        case 3 where k.equals("app"): app = try str()
        default: try s.skipValue()
        }
    }

    private static func name(_ k: UnsafeRawBufferPointer) -> String { String(decoding: k, as: UTF8.self) }

    private static func typed<T>(_ k: UnsafeRawBufferPointer, _ expected: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw TraceLine.Invalid(reason: "field \"\(name(k))\" is not \(expected) (\(error))")
        }
    }

    private static func string(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner) throws -> String {
        try typed(k, "a string") { try s.readString() }
    }

    // The same ranges as ``TraceRecordScanner``: both readers accept and reject the same lines.
    private static func int(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner, _ range: ClosedRange<Int64>) throws -> Int {
        let v = try typed(k, "a number") { try s.readInt() }
        guard range.contains(v), let i = Int(exactly: v) else {
            throw TraceLine.Invalid(reason: "field \"\(name(k))\" is out of range (\(v), expected \(range.lowerBound) to \(range.upperBound))")
        }
        return i
    }

    private static func double(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner, _ range: ClosedRange<Double>) throws -> Double {
        let v = try typed(k, "a number") { try s.readDouble() }
        guard v.isFinite, range.contains(v) else {
            throw TraceLine.Invalid(reason: "field \"\(name(k))\" is out of range (\(v))")
        }
        return v
    }

    private static func time(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner) throws -> TraceTimestamp {
        let (raw, _) = try typed(k, "a string") { try s.readRawString() }
        guard let t = TraceTimestamp.parse(raw) else {
            throw TraceLine.Invalid(reason: "field \"\(name(k))\" is not an RFC 3339 timestamp")
        }
        return t
    }

    private static func bool(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner) throws -> Bool {
        try typed(k, "true or false") { try s.readBool() }
    }

    private static func stringMap(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner) throws -> [String: String] {
        try typed(k, "an object") { try s.readStringMap() }
    }

    private func required<T>(_ value: T?, _ field: String) throws -> T {
        guard let value else { throw TraceLine.Invalid(reason: "missing field \"\(field)\"") }
        return value
    }

    func makeLine() throws -> TraceLine {
        let type = try required(type, "type")
        if type == "header" {
            guard format == TraceFileHeader.formatName else {
                throw TraceLine.Invalid(reason: "header field \"format\" is not \"apitrace\"")
            }
            return .header(TraceFileHeader(
                version: try required(version, "version"), producer: producer ?? "unknown", app: app,
                appVersion: appVersion, host: host, started: try required(started, "started")))
        }
        let payload: TraceEvent.Payload
        switch type {
        case "request":
            payload = .request(.init(
                method: try required(method, "method"), route: try required(route, "route"), host: host,
                status: status, durationMs: try required(durationMs, "duration_ms"), bytesIn: bytesIn,
                bytesOut: bytesOut, error: error, attempt: attempt ?? 1, sampleRate: sampleRate,
                timing: TraceEvent.Request.Timing(
                    dnsMs: dnsMs, connectMs: connectMs, tlsMs: tlsMs, firstByteMs: ttfbMs,
                    networkProtocol: networkProtocol, reusedConnection: reused), port: port))
        case "decode_failure":
            payload = .decodeFailure(.init(
                route: route, entity: try required(entity, "entity"),
                kind: .init(rawValue: try required(kind, "kind")), path: path ?? "", key: key,
                message: message ?? ""))
        case "error":
            payload = .error(.init(
                identity: try required(identity, "identity"), message: message ?? "", userInfo: userInfo ?? [:],
                underlying: underlying ?? [], route: route, file: file, line: line, suppressed: suppressed))
        case "sse":
            payload = .sse(.init(
                phase: .init(rawValue: try required(phase, "phase")), route: route ?? "", attempt: attempt,
                delayMs: delayMs, lastEventID: lastEventID, reason: reason, status: status, events: events,
                durationMs: durationMs))
        case "log":
            payload = .log(.init(
                level: try required(level, "level"), message: message ?? "", metadata: metadata ?? [:], source: source))
        case "dropped":
            payload = .dropped(.init(count: try required(count, "count"), reason: reason ?? "unknown"))
        default:
            return .unknown(type: type)
        }
        return .event(TraceEvent(timestamp: try required(ts, "ts"), session: session, traceID: traceID, spanID: spanID, payload))
    }
}
