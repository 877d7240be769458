import Foundation

/// Scans trace lines into ``TraceRecord``s: the one decoder of trace lines. Every reader (report,
/// alert, export, cat, the collector, and ``TraceLine/decode(_:)`` for full events) takes its facts
/// from it, so they all accept, reject and read a line alike.
///
/// One pass over the bytes with ``JSONScanner``: JSON as RFC 8259 defines it, escapes in keys and
/// values included (`{"st\u0061tus":200}` is status 200); a repeated key keeps its last value, `null`
/// included; required fields and number ranges are checked; every problem is named by its field.
/// Text without escapes stays a slice of the line; text with escapes is decoded once into a buffer
/// the scanner owns, so readers never see an escape.
///
/// ```swift
/// var scanner = TraceRecordScanner()
/// if case .event = scanner.scan(line) { use(scanner.record) }
/// ```
package struct TraceRecordScanner {
    /// The last line scanned (valid after ``scan(_:)`` returned `.event` or `.header`, while the line is).
    package private(set) var record = TraceRecord()
    private var timestamps = MinuteTimestamps()
    /// Decoded text of the current line's escaped strings; made on the first escape ever met.
    private var decoded: DecodedText?
    /// Length of the current line, the most its decoded text can take.
    private var lineLength = 0
    private var decodedReady = false
    /// The key that followed each field in the lines before (at ``lineStart``: the first key).
    /// Lines of one file list their keys in a few fixed orders, so each key is first compared in
    /// place with the one that followed the previous key last time, and looked up only when it
    /// differs. Keyed by the previous field rather than by position, so an optional field left out
    /// (`trace_id`, `bytes_out`) costs one miss, not one for every key after it.
    private var following = [Expected](repeating: Expected(), count: Field.allCases.count + 1)

    /// A key seen after a field, and its field.
    private struct Expected {
        var key = PlainKey()
        var field = Field.other
    }

    /// Where ``following`` holds the line's first key.
    private static let lineStart = 0

    package init() {}

    /// What a line was.
    package enum Result: Sendable, Equatable {
        /// An event of a known type, now in ``TraceRecordScanner/record``.
        case event
        /// A header line (its fields checked and in ``TraceRecordScanner/record``).
        case header
        /// An event type this version does not know (skipped, as the format asks).
        case unknownType
        /// Not a valid trace line; the reason names the field at fault.
        case invalid(String)
    }

    private struct Invalid: Error { var reason: String }

    /// Scans one line (without its newline).
    package mutating func scan(_ line: UnsafeRawBufferPointer) -> Result {
        record = TraceRecord()
        lineLength = line.count
        decodedReady = false
        var ts: RawText?
        var started: RawText?
        do {
            var s = JSONScanner(line)
            try s.beginObject()
            var after = Self.lineStart
            while true {
                let expected = following[after]
                let field: Field
                if let k = s.nextKey(ifItIs: expected.key) {
                    field = expected.field
                    try read(field, k, &s, ts: &ts, started: &started)
                } else {
                    guard let key = try s.nextKey() else { break }
                    if key.hasEscapes {
                        let k = text(key.bytes)
                        field = Self.field(k)
                        try read(field, k, &s, ts: &ts, started: &started)
                    } else {
                        field = Self.field(key.bytes)
                        // Only keys read as they are written: their bytes are the key's.
                        if let plain = PlainKey(key.bytes) { following[after] = Expected(key: plain, field: field) }
                        try read(field, key.bytes, &s, ts: &ts, started: &started)
                    }
                }
                after = Int(field.rawValue) + 1
            }
            guard s.isAtEnd() else { return .invalid("text after the JSON object at column \(s.position + 1)") }
        } catch let error as Invalid {
            return .invalid(error.reason)
        } catch let error as JSONScanner.Error {
            return .invalid(error.description)
        } catch {
            return .invalid("\(error)")
        }
        guard let type = record.type else { return .invalid("missing field \"type\"") }
        let t = type.bytes
        switch t.count {
        case 7 where t.equals("request"): record.kind = .request
        case 14 where t.equals("decode_failure"): record.kind = .decodeFailure
        case 5 where t.equals("error"): record.kind = .error
        case 3 where t.equals("sse"): record.kind = .sse
        case 3 where t.equals("log"): record.kind = .log
        case 7 where t.equals("dropped"): record.kind = .dropped
        case 9 where t.equals("websocket"): record.kind = .websocket
        case 6 where t.equals("header"): return header(started: started)
        default: return .unknownType
        }
        guard let ts else { return .invalid("missing field \"ts\"") }
        guard let time = timestamps.milliseconds(ts.bytes) else {
            return .invalid("field \"ts\" is not an RFC 3339 timestamp from 1970 to 9999")
        }
        record.timestamp = time
        switch record.kind {
        case .request:
            guard record.method != nil else { return .invalid("missing field \"method\"") }
            guard record.route != nil else { return .invalid("missing field \"route\"") }
            guard record.durationMs != nil else { return .invalid("missing field \"duration_ms\"") }
            record.outcome = record.status.map { RequestOutcome.of(status: $0) }
                ?? RequestOutcome.ofTransportFailure(identity: record.error?.bytes)
            (record.weight, record.ignoredSampleRate) = RequestWeight.of(outcome: record.outcome, sampleRate: record.sampleRate)
        case .decodeFailure:
            guard record.entity != nil else { return .invalid("missing field \"entity\"") }
            guard record.failureKind != nil else { return .invalid("missing field \"kind\"") }
        case .error:
            guard record.identity != nil else { return .invalid("missing field \"identity\"") }
        case .sse, .websocket:
            guard record.phase != nil else { return .invalid("missing field \"phase\"") }
        case .log:
            guard record.level != nil else { return .invalid("missing field \"level\"") }
        case .dropped:
            guard record.count != nil else { return .invalid("missing field \"count\"") }
        }
        return .event
    }

    /// True when the bytes are one JSON object as RFC 8259 defines it, whatever its fields (for
    /// telling a line that is not JSON from one that breaks the format's rules, off the hot path).
    package static func isJSONObject(_ line: UnsafeRawBufferPointer) -> Bool {
        var s = JSONScanner(line)
        guard s.peek() == UInt8(ascii: "{") else { return false }
        do { try s.skipValue() } catch { return false }
        return s.isAtEnd()
    }

    /// Checks a header line's fields.
    private mutating func header(started: RawText?) -> Result {
        guard let format = record.format, format.bytes.equals("apitrace") else {
            return .invalid("header field \"format\" is not \"apitrace\"")
        }
        guard record.version != nil else { return .invalid("missing field \"version\"") }
        guard let started else { return .invalid("missing field \"started\"") }
        guard let time = TraceTimestamp.parse(started.bytes) else {
            return .invalid("field \"started\" is not an RFC 3339 timestamp from 1970 to 9999")
        }
        record.started = time.millisecondsSince1970
        return .header
    }

    /// The decoded text of raw string contents holding escapes.
    private mutating func text(_ raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if !decodedReady {
            if decoded == nil { decoded = DecodedText() }
            decoded!.reset(capacity: lineLength)
            decodedReady = true
        }
        return decoded!.decode(raw)
    }

    /// Every key the format gives a meaning, as its field; ``other`` for the rest (skipped).
    private enum Field: UInt8, CaseIterable {
        case ts, key, app
        case type, host, kind, path, file, line, code, port
        case route, error, phase, level, count, pings
        case method, status, entity, reason, events, source, format, dnsMs, tlsMs, reused
        case message, session, attempt, ttfbMs, spanID, version, started
        case bytesIn, identity, delayMs, traceID, networkProtocol, producer, metadata
        case bytesOut, userInfo, closedBy
        case suppressed, connectMs, underlying, silenceMs
        case durationMs, sampleRate, appVersion, messagesIn, pingRTTMs
        case messagesOut, lastEventID
        case other
    }

    /// The field of a key (decoded): the general lookup, for a key other than the one expected.
    private static func field(_ k: UnsafeRawBufferPointer) -> Field {
        switch k.count {
        case 2:
            if k.equals("ts") { return .ts }
        case 3:
            if k.equals("key") { return .key }
            if k.equals("app") { return .app }
        case 4:
            if k.equals("type") { return .type }
            if k.equals("host") { return .host }
            if k.equals("kind") { return .kind }
            if k.equals("path") { return .path }
            if k.equals("file") { return .file }
            if k.equals("line") { return .line }
            if k.equals("code") { return .code }
            if k.equals("port") { return .port }
        case 5:
            if k.equals("route") { return .route }
            if k.equals("error") { return .error }
            if k.equals("phase") { return .phase }
            if k.equals("level") { return .level }
            if k.equals("count") { return .count }
            if k.equals("pings") { return .pings }
        case 6:
            if k.equals("method") { return .method }
            if k.equals("status") { return .status }
            if k.equals("entity") { return .entity }
            if k.equals("reason") { return .reason }
            if k.equals("events") { return .events }
            if k.equals("source") { return .source }
            if k.equals("format") { return .format }
            if k.equals("dns_ms") { return .dnsMs }
            if k.equals("tls_ms") { return .tlsMs }
            if k.equals("reused") { return .reused }
        case 7:
            if k.equals("message") { return .message }
            if k.equals("session") { return .session }
            if k.equals("attempt") { return .attempt }
            if k.equals("ttfb_ms") { return .ttfbMs }
            if k.equals("span_id") { return .spanID }
            if k.equals("version") { return .version }
            if k.equals("started") { return .started }
        case 8:
            if k.equals("bytes_in") { return .bytesIn }
            if k.equals("identity") { return .identity }
            if k.equals("delay_ms") { return .delayMs }
            if k.equals("trace_id") { return .traceID }
            if k.equals("protocol") { return .networkProtocol }
            if k.equals("producer") { return .producer }
            if k.equals("metadata") { return .metadata }
        case 9:
            if k.equals("bytes_out") { return .bytesOut }
            if k.equals("user_info") { return .userInfo }
            if k.equals("closed_by") { return .closedBy }
        case 10:
            if k.equals("suppressed") { return .suppressed }
            if k.equals("connect_ms") { return .connectMs }
            if k.equals("underlying") { return .underlying }
            if k.equals("silence_ms") { return .silenceMs }
        case 11:
            if k.equals("duration_ms") { return .durationMs }
            if k.equals("sample_rate") { return .sampleRate }
            if k.equals("app_version") { return .appVersion }
            if k.equals("messages_in") { return .messagesIn }
            if k.equals("ping_rtt_ms") { return .pingRTTMs }
        case 12:
            if k.equals("messages_out") { return .messagesOut }
        case 13:
            if k.equals("last_event_id") { return .lastEventID }
        default:
            break
        }
        return .other
    }

    // Each field's reader returns nil for `null`, so a later `null` clears an earlier value: the last
    // of repeated keys wins, whatever its value. `k` is the key as decoded, for messages.
    @inline(__always)
    private mutating func read(_ field: Field, _ k: UnsafeRawBufferPointer, _ s: inout JSONScanner, ts: inout RawText?, started: inout RawText?) throws {
        typealias L = TraceRecord.Limits
        switch field {
        case .ts: ts = try str(&s, k)
        case .key: record.key = try str(&s, k)
        case .app: record.app = try str(&s, k)
        case .type: record.type = try str(&s, k)
        case .host: record.host = try str(&s, k)
        case .kind: record.failureKind = try str(&s, k)
        case .path: record.path = try str(&s, k)
        case .file: record.file = try str(&s, k)
        case .line: record.line = try Self.int(&s, k, Int64.min...Int64.max)
        case .code: record.code = try Self.int(&s, k, 0...65_535)
        case .port: record.port = try Self.int(&s, k, 1...65_535)
        case .route: record.route = try str(&s, k)
        case .error: record.error = try str(&s, k)
        case .phase: record.phase = try str(&s, k)
        case .level: record.level = try str(&s, k)
        case .count: record.count = try Self.int(&s, k, L.count)
        case .pings: record.pings = try Self.int(&s, k, L.count)
        case .method: record.method = try str(&s, k)
        case .status: record.status = try Self.int(&s, k, L.status).map { Int($0) }
        case .entity: record.entity = try str(&s, k)
        case .reason: record.reason = try str(&s, k)
        case .events: record.events = try Self.int(&s, k, L.count)
        case .source: record.source = try str(&s, k)
        case .format: record.format = try str(&s, k)
        case .dnsMs: record.dnsMs = try Self.dbl(&s, k, L.milliseconds)
        case .tlsMs: record.tlsMs = try Self.dbl(&s, k, L.milliseconds)
        case .reused: record.reused = try Self.bool(&s, k)
        case .message: record.message = try str(&s, k)
        case .session: record.session = try str(&s, k)
        case .attempt: record.attempt = try Self.int(&s, k, L.attempt)
        case .ttfbMs: record.ttfbMs = try Self.dbl(&s, k, L.milliseconds)
        case .spanID: record.spanID = try str(&s, k)
        case .version: record.version = try Self.int(&s, k, Int64.min...Int64.max)
        case .started: started = try str(&s, k)
        case .bytesIn: record.bytesIn = try Self.int(&s, k, L.bytes)
        case .identity: record.identity = try str(&s, k)
        case .delayMs: record.delayMs = try Self.dbl(&s, k, L.milliseconds)
        case .traceID: record.traceID = try str(&s, k)
        case .networkProtocol: record.networkProtocol = try str(&s, k)
        case .producer: record.producer = try str(&s, k)
        case .metadata: record.metadataJSON = try Self.object(&s, k)
        case .bytesOut: record.bytesOut = try Self.int(&s, k, L.bytes)
        case .userInfo: record.userInfoJSON = try Self.object(&s, k)
        case .closedBy: record.closedBy = try str(&s, k)
        case .suppressed: record.suppressed = try Self.int(&s, k, L.count)
        case .connectMs: record.connectMs = try Self.dbl(&s, k, L.milliseconds)
        case .underlying: record.underlyingJSON = try Self.stringArray(&s, k)
        case .silenceMs: record.silenceMs = try Self.dbl(&s, k, L.milliseconds)
        case .durationMs: record.durationMs = try Self.dbl(&s, k, L.milliseconds)
        case .sampleRate: record.sampleRate = try Self.dbl(&s, k, -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
        case .appVersion: record.appVersion = try str(&s, k)
        case .messagesIn: record.messagesIn = try Self.int(&s, k, L.count)
        case .pingRTTMs: record.pingRTTMs = try Self.dbl(&s, k, L.milliseconds)
        case .messagesOut: record.messagesOut = try Self.int(&s, k, L.count)
        case .lastEventID: record.lastEventID = try str(&s, k)
        case .other: try s.skipValue()
        }
    }

    private static func name(_ k: UnsafeRawBufferPointer) -> String { String(decoding: k, as: UTF8.self) }

    @inline(__always)
    private mutating func str(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> RawText? {
        if let plain = s.readPlainString() { return RawText(bytes: plain, hasEscapes: false) }
        if s.consumeNull() { return nil }
        do {
            let raw = try s.readRawString()
            guard raw.hasEscapes else { return RawText(bytes: raw.bytes, hasEscapes: false) }
            return RawText(bytes: text(raw.bytes), hasEscapes: false)
        } catch {
            throw Invalid(reason: "field \"\(Self.name(k))\" is not a string (\(error))")
        }
    }

    @inline(__always)
    private static func int(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer, _ range: ClosedRange<Int64>) throws(Invalid) -> Int64? {
        let v: Int64
        if let plain = s.readPlainInt() {
            v = plain
        } else {
            if s.consumeNull() { return nil }
            do { v = try s.readInt() } catch {
                throw Invalid(reason: "field \"\(name(k))\" is not a number (\(error))")
            }
        }
        guard range.contains(v) else {
            throw Invalid(reason: "field \"\(name(k))\" is out of range (\(v), expected \(range.lowerBound) to \(range.upperBound))")
        }
        return v
    }

    @inline(__always)
    private static func bool(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> Bool? {
        if s.consumeNull() { return nil }
        do { return try s.readBool() } catch {
            throw Invalid(reason: "field \"\(name(k))\" is not true or false (\(error))")
        }
    }

    @inline(__always)
    private static func dbl(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer, _ range: ClosedRange<Double>) throws(Invalid) -> Double? {
        if s.consumeNull() { return nil }
        let v: Double
        do { v = try s.readDouble() } catch {
            throw Invalid(reason: "field \"\(name(k))\" is not a number (\(error))")
        }
        guard v.isFinite, range.contains(v) else {
            throw Invalid(reason: "field \"\(name(k))\" is out of range (\(v), expected \(range.lowerBound.formatted()) to \(range.upperBound.formatted()))")
        }
        return v
    }

    /// An object field, kept as its checked JSON text.
    private static func object(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> RawText? {
        if s.consumeNull() { return nil }
        do {
            guard s.peek() == UInt8(ascii: "{") else { throw s.fail("expected an object") }
            let start = s.position
            try s.skipValue()
            return RawText(bytes: UnsafeRawBufferPointer(rebasing: s.bytes[start..<s.position]), hasEscapes: false)
        } catch {
            throw Invalid(reason: "field \"\(name(k))\" is not an object (\(error))")
        }
    }

    /// An array-of-strings field, kept as its checked JSON text.
    private static func stringArray(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> RawText? {
        if s.consumeNull() { return nil }
        do {
            guard s.peek() == UInt8(ascii: "[") else { throw s.fail("expected an array") }
            let start = s.position
            s.position += 1
            if s.peek() == UInt8(ascii: "]") {
                s.position += 1
            } else {
                while true {
                    _ = try s.readRawString()
                    guard let c = s.peek() else { throw s.fail("unterminated array") }
                    s.position += 1
                    if c == UInt8(ascii: "]") { break }
                    guard c == UInt8(ascii: ",") else { s.position -= 1; throw s.fail("expected ',' or ']'") }
                }
            }
            return RawText(bytes: UnsafeRawBufferPointer(rebasing: s.bytes[start..<s.position]), hasEscapes: false)
        } catch {
            throw Invalid(reason: "field \"\(name(k))\" is not an array of strings (\(error))")
        }
    }
}

extension Double {
    fileprivate func formatted() -> String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : "\(self)"
    }
}
