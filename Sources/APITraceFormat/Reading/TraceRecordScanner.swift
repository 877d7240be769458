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
            while let key = try s.nextKey() {
                if key.hasEscapes {
                    try read(text(key.bytes), &s, ts: &ts, started: &started)
                } else {
                    try read(key.bytes, &s, ts: &ts, started: &started)
                }
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

    // Each field's reader returns nil for `null`, so a later `null` clears an earlier value: the last
    // of repeated keys wins, whatever its value.
    @inline(__always)
    private mutating func read(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner, ts: inout RawText?, started: inout RawText?) throws {
        typealias L = TraceRecord.Limits
        switch k.count {
        case 2:
            if k.equals("ts") { ts = try str(&s, k) } else { try s.skipValue() }
        case 3:
            if k.equals("key") { record.key = try str(&s, k) }
            else if k.equals("app") { record.app = try str(&s, k) }
            else { try s.skipValue() }
        case 4:
            if k.equals("type") { record.type = try str(&s, k) }
            else if k.equals("host") { record.host = try str(&s, k) }
            else if k.equals("kind") { record.failureKind = try str(&s, k) }
            else if k.equals("path") { record.path = try str(&s, k) }
            else if k.equals("file") { record.file = try str(&s, k) }
            else if k.equals("line") { record.line = try Self.int(&s, k, Int64.min...Int64.max) }
            else if k.equals("code") { record.code = try Self.int(&s, k, 0...65_535) }
            else if k.equals("port") { record.port = try Self.int(&s, k, 1...65_535) }
            else { try s.skipValue() }
        case 5:
            if k.equals("route") { record.route = try str(&s, k) }
            else if k.equals("error") { record.error = try str(&s, k) }
            else if k.equals("phase") { record.phase = try str(&s, k) }
            else if k.equals("level") { record.level = try str(&s, k) }
            else if k.equals("count") { record.count = try Self.int(&s, k, L.count) }
            else if k.equals("pings") { record.pings = try Self.int(&s, k, L.count) }
            else { try s.skipValue() }
        case 6:
            if k.equals("method") { record.method = try str(&s, k) }
            else if k.equals("status") { record.status = try Self.int(&s, k, L.status).map { Int($0) } }
            else if k.equals("entity") { record.entity = try str(&s, k) }
            else if k.equals("reason") { record.reason = try str(&s, k) }
            else if k.equals("events") { record.events = try Self.int(&s, k, L.count) }
            else if k.equals("source") { record.source = try str(&s, k) }
            else if k.equals("format") { record.format = try str(&s, k) }
            else if k.equals("dns_ms") { record.dnsMs = try Self.dbl(&s, k, L.milliseconds) }
            else if k.equals("tls_ms") { record.tlsMs = try Self.dbl(&s, k, L.milliseconds) }
            else if k.equals("reused") { record.reused = try Self.bool(&s, k) }
            else { try s.skipValue() }
        case 7:
            if k.equals("message") { record.message = try str(&s, k) }
            else if k.equals("session") { record.session = try str(&s, k) }
            else if k.equals("attempt") { record.attempt = try Self.int(&s, k, L.attempt) }
            else if k.equals("ttfb_ms") { record.ttfbMs = try Self.dbl(&s, k, L.milliseconds) }
            else if k.equals("span_id") { record.spanID = try str(&s, k) }
            else if k.equals("version") { record.version = try Self.int(&s, k, Int64.min...Int64.max) }
            else if k.equals("started") { started = try str(&s, k) }
            else { try s.skipValue() }
        case 8:
            if k.equals("bytes_in") { record.bytesIn = try Self.int(&s, k, L.bytes) }
            else if k.equals("identity") { record.identity = try str(&s, k) }
            else if k.equals("delay_ms") { record.delayMs = try Self.dbl(&s, k, L.milliseconds) }
            else if k.equals("trace_id") { record.traceID = try str(&s, k) }
            else if k.equals("protocol") { record.networkProtocol = try str(&s, k) }
            else if k.equals("producer") { record.producer = try str(&s, k) }
            else if k.equals("metadata") { record.metadataJSON = try Self.object(&s, k) }
            else { try s.skipValue() }
        case 9:
            if k.equals("bytes_out") { record.bytesOut = try Self.int(&s, k, L.bytes) }
            else if k.equals("user_info") { record.userInfoJSON = try Self.object(&s, k) }
            else if k.equals("closed_by") { record.closedBy = try str(&s, k) }
            else { try s.skipValue() }
        case 10:
            if k.equals("suppressed") { record.suppressed = try Self.int(&s, k, L.count) }
            else if k.equals("connect_ms") { record.connectMs = try Self.dbl(&s, k, L.milliseconds) }
            else if k.equals("underlying") { record.underlyingJSON = try Self.stringArray(&s, k) }
            else if k.equals("silence_ms") { record.silenceMs = try Self.dbl(&s, k, L.milliseconds) }
            else { try s.skipValue() }
        case 11:
            if k.equals("duration_ms") { record.durationMs = try Self.dbl(&s, k, L.milliseconds) }
            else if k.equals("sample_rate") { record.sampleRate = try Self.dbl(&s, k, -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) }
            else if k.equals("app_version") { record.appVersion = try str(&s, k) }
            else if k.equals("messages_in") { record.messagesIn = try Self.int(&s, k, L.count) }
            else if k.equals("ping_rtt_ms") { record.pingRTTMs = try Self.dbl(&s, k, L.milliseconds) }
            else { try s.skipValue() }
        case 12:
            if k.equals("messages_out") { record.messagesOut = try Self.int(&s, k, L.count) } else { try s.skipValue() }
        case 13:
            if k.equals("last_event_id") { record.lastEventID = try str(&s, k) } else { try s.skipValue() }
        default:
            try s.skipValue()
        }
    }

    private static func name(_ k: UnsafeRawBufferPointer) -> String { String(decoding: k, as: UTF8.self) }

    @inline(__always)
    private mutating func str(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> RawText? {
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
        if s.consumeNull() { return nil }
        let v: Int64
        do { v = try s.readInt() } catch {
            throw Invalid(reason: "field \"\(name(k))\" is not a number (\(error))")
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
