import Foundation

/// Scans event lines into ``TraceRecord``s: one pass over the bytes with ``JSONScanner``, only the
/// fields readers use, required fields and number ranges checked as ``TraceLine/decode(_:)``
/// checks them, and every problem named by its field.
///
/// ```swift
/// var scanner = TraceRecordScanner()
/// if case .event = scanner.scan(line) { use(scanner.record) }
/// ```
package struct TraceRecordScanner {
    /// The last line scanned as an event (valid after ``scan(_:)`` returned `.event`, while the line is).
    package private(set) var record = TraceRecord()
    private var minutePrefix: (UInt64, UInt64) = (0, 0)
    private var minuteMs: Int64 = 0

    package init() {}

    /// What a line was.
    package enum Result: Sendable, Equatable {
        /// An event of a known type, now in ``TraceRecordScanner/record``.
        case event
        /// A header line.
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
        var type: RawText?
        var ts: RawText?
        do {
            var s = JSONScanner(line)
            try s.beginObject()
            while let k = try s.nextKey() {
                if s.consumeNull() { continue }
                try read(k, &s, type: &type, ts: &ts)
            }
            guard s.isAtEnd() else { return .invalid("text after the JSON object") }
        } catch let error as Invalid {
            return .invalid(error.reason)
        } catch let error as JSONScanner.Error {
            return .invalid("\(error.reason) at column \(error.offset + 1)")
        } catch {
            return .invalid("\(error)")
        }
        guard let type else { return .invalid("missing field \"type\"") }
        let t = type.bytes
        switch t.count {
        case 7 where t.equals("request"): record.kind = .request
        case 14 where t.equals("decode_failure"): record.kind = .decodeFailure
        case 5 where t.equals("error"): record.kind = .error
        case 3 where t.equals("sse"): record.kind = .sse
        case 3 where t.equals("log"): record.kind = .log
        case 7 where t.equals("dropped"): record.kind = .dropped
        case 6 where t.equals("header"): return .header
        default: return .unknownType
        }
        guard let ts else { return .invalid("missing field \"ts\"") }
        guard let time = timestamp(ts.bytes) else {
            return .invalid("field \"ts\" is not an RFC 3339 timestamp from 1970 to 9999")
        }
        record.timestamp = time
        switch record.kind {
        case .request:
            guard record.method != nil else { return .invalid("missing field \"method\"") }
            guard record.route != nil else { return .invalid("missing field \"route\"") }
            guard record.durationMs != nil else { return .invalid("missing field \"duration_ms\"") }
            record.outcome = record.status.map { RequestOutcome.of(status: $0) }
                ?? RequestOutcome.ofTransportFailure(identity: record.error?.hasEscapes == false ? record.error?.bytes : nil)
            if record.status == nil, let error = record.error, error.hasEscapes {
                record.outcome = RequestOutcome.of(status: nil, error: error.string)
            }
            (record.weight, record.ignoredSampleRate) = RequestWeight.of(outcome: record.outcome, sampleRate: record.sampleRate)
        case .decodeFailure:
            guard record.entity != nil else { return .invalid("missing field \"entity\"") }
            guard record.failureKind != nil else { return .invalid("missing field \"kind\"") }
        case .error:
            guard record.identity != nil else { return .invalid("missing field \"identity\"") }
        case .sse:
            guard record.phase != nil else { return .invalid("missing field \"phase\"") }
        case .log:
            guard record.level != nil else { return .invalid("missing field \"level\"") }
        case .dropped:
            guard record.count != nil else { return .invalid("missing field \"count\"") }
        }
        return .event
    }

    @inline(__always)
    private mutating func read(_ k: UnsafeRawBufferPointer, _ s: inout JSONScanner, type: inout RawText?, ts: inout RawText?) throws {
        switch k.count {
        case 2:
            if k.equals("ts") { ts = try Self.str(&s, k) } else { try s.skipValue() }
        case 3:
            if k.equals("key") { record.key = try Self.str(&s, k) } else { try s.skipValue() }
        case 4:
            if k.equals("type") { type = try Self.str(&s, k) }
            else if k.equals("host") { record.host = try Self.str(&s, k) }
            else if k.equals("kind") { record.failureKind = try Self.str(&s, k) }
            else if k.equals("path") { record.path = try Self.str(&s, k) }
            else { try s.skipValue() }
        case 5:
            if k.equals("route") { record.route = try Self.str(&s, k) }
            else if k.equals("error") { record.error = try Self.str(&s, k) }
            else if k.equals("phase") { record.phase = try Self.str(&s, k) }
            else if k.equals("level") { record.level = try Self.str(&s, k) }
            else if k.equals("count") { record.count = try Self.int(&s, k, TraceRecord.Limits.count) }
            else { try s.skipValue() }
        case 6:
            if k.equals("method") { record.method = try Self.str(&s, k) }
            else if k.equals("status") { record.status = Int(try Self.int(&s, k, TraceRecord.Limits.status)) }
            else if k.equals("entity") { record.entity = try Self.str(&s, k) }
            else if k.equals("reason") { record.reason = try Self.str(&s, k) }
            else if k.equals("events") { record.events = try Self.int(&s, k, TraceRecord.Limits.count) }
            else if k.equals("dns_ms") || k.equals("tls_ms") { _ = try Self.dbl(&s, k, TraceRecord.Limits.milliseconds) }
            else if k.equals("reused") { try Self.bool(&s, k) }
            else { try s.skipValue() }
        case 7:
            if k.equals("message") { record.message = try Self.str(&s, k) }
            else if k.equals("session") { record.session = try Self.str(&s, k) }
            else if k.equals("attempt") { record.attempt = try Self.int(&s, k, TraceRecord.Limits.attempt) }
            else if k.equals("ttfb_ms") { _ = try Self.dbl(&s, k, TraceRecord.Limits.milliseconds) }
            else { try s.skipValue() }
        case 8:
            if k.equals("bytes_in") { record.bytesIn = try Self.int(&s, k, TraceRecord.Limits.bytes) }
            else if k.equals("identity") { record.identity = try Self.str(&s, k) }
            else if k.equals("delay_ms") { record.delayMs = try Self.dbl(&s, k, TraceRecord.Limits.milliseconds) }
            else if k.equals("trace_id") { record.traceID = try Self.str(&s, k) }
            else if k.equals("protocol") { _ = try Self.str(&s, k) }
            else { try s.skipValue() }
        case 9:
            if k.equals("bytes_out") { record.bytesOut = try Self.int(&s, k, TraceRecord.Limits.bytes) } else { try s.skipValue() }
        case 10:
            if k.equals("suppressed") { record.suppressed = try Self.int(&s, k, TraceRecord.Limits.count) }
            else if k.equals("connect_ms") { _ = try Self.dbl(&s, k, TraceRecord.Limits.milliseconds) }
            else { try s.skipValue() }
        case 11:
            if k.equals("duration_ms") { record.durationMs = try Self.dbl(&s, k, TraceRecord.Limits.milliseconds) }
            else if k.equals("sample_rate") { record.sampleRate = try Self.dbl(&s, k, -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) }
            else { try s.skipValue() }
        default:
            try s.skipValue()
        }
    }

    @inline(__always)
    private static func str(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> RawText {
        do {
            let raw = try s.readRawString()
            return RawText(bytes: raw.bytes, hasEscapes: raw.hasEscapes)
        } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not a string (\(error.reason))")
        }
    }

    @inline(__always)
    private static func int(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer, _ range: ClosedRange<Int64>) throws(Invalid) -> Int64 {
        let v: Int64
        do { v = try s.readInt() } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not a number (\(error.reason))")
        }
        guard range.contains(v) else {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is out of range (\(v), expected \(range.lowerBound) to \(range.upperBound))")
        }
        return v
    }

    /// Checks a boolean field (the connection-reuse flag, which no reader counts yet).
    @inline(__always)
    private static func bool(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) {
        do { _ = try s.readBool() } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not true or false (\(error.reason))")
        }
    }

    @inline(__always)
    private static func dbl(_ s: inout JSONScanner, _ k: UnsafeRawBufferPointer, _ range: ClosedRange<Double>) throws(Invalid) -> Double {
        let v: Double
        do { v = try s.readDouble() } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not a number (\(error.reason))")
        }
        guard v.isFinite, range.contains(v) else {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is out of range (\(v), expected \(range.lowerBound.formatted()) to \(range.upperBound.formatted()))")
        }
        return v
    }

    /// Parses `ts`, reusing the last minute when the text starts the same (the common case:
    /// `2026-11-22T10:00:07.123Z` after `2026-11-22T10:00:06.871Z`).
    @inline(__always)
    private mutating func timestamp(_ b: UnsafeRawBufferPointer) -> Int64? {
        if b.count == 24, b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "."), b[23] == UInt8(ascii: "Z") {
            let prefix = (b.loadUnaligned(fromByteOffset: 0, as: UInt64.self), b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let s1 = b[17] &- 48, s2 = b[18] &- 48, m1 = b[20] &- 48, m2 = b[21] &- 48, m3 = b[22] &- 48
            let withinMinute = Int64(s1) * 10_000 + Int64(s2) * 1000 + Int64(m1) * 100 + Int64(m2) * 10 + Int64(m3)
            if prefix == minutePrefix, minuteMs > 0, s1 < 6, s2 < 10, m1 < 10, m2 < 10, m3 < 10 {
                return minuteMs + withinMinute
            }
            guard let t = TraceTimestamp.parse(b) else { return nil }
            if s1 < 6, s2 < 10, m1 < 10, m2 < 10, m3 < 10 {
                minutePrefix = prefix
                minuteMs = t.millisecondsSince1970 - withinMinute
            }
            return t.millisecondsSince1970
        }
        return TraceTimestamp.parse(b)?.millisecondsSince1970
    }
}

extension Double {
    fileprivate func formatted() -> String {
        self == rounded() && abs(self) < 1e15 ? String(Int64(self)) : "\(self)"
    }
}
