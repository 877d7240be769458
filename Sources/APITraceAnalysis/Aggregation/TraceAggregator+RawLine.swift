import Foundation
import APITraceFormat

extension TraceAggregator {
    /// What ``add(line:)`` made of a line.
    public enum LineOutcome: Sendable, Equatable {
        /// An event matching the filter, counted.
        case counted
        /// A valid event left out by the filter.
        case filtered
        /// An event type this version does not know, skipped.
        case unknownType
        /// A header line (only the first line of a file should be one).
        case header
        /// Not a valid trace line; the reason names the field at fault.
        case invalid(String)
    }

    /// Counts one raw JSON line (without its newline) if it is an event matching the filter.
    ///
    /// Reads only the fields a report needs, straight from the bytes: no `TraceEvent`, no
    /// `String` for routes, methods or identities (they are interned from their bytes).
    /// Required fields are checked as ``TraceLine/decode(_:)`` checks them.
    public mutating func add(line: UnsafeRawBufferPointer) -> LineOutcome {
        var f = RawFields()
        do {
            try f.scan(line)
        } catch {
            return .invalid(error.reason)
        }
        guard let type = f.type else { return .invalid("missing field \"type\"") }
        let kind: EventType
        switch type.bytes.count {
        case 7 where type.bytes.is("request"): kind = .request
        case 14 where type.bytes.is("decode_failure"): kind = .decodeFailure
        case 5 where type.bytes.is("error"): kind = .error
        case 3 where type.bytes.is("sse"): kind = .sse
        case 3 where type.bytes.is("log"): kind = .log
        case 7 where type.bytes.is("dropped"): kind = .dropped
        case 6 where type.bytes.is("header"): return .header
        default: return .unknownType
        }
        guard let tsBytes = f.ts else { return .invalid("missing field \"ts\"") }
        guard let ts = timestamp(tsBytes.bytes) else { return .invalid("field \"ts\" is not an RFC 3339 timestamp") }
        let ms = ts.millisecondsSince1970
        guard filter.matches(time: ts) else { base.eventsFiltered += 1; return .filtered }
        if filter.host != nil, kind != .dropped {
            guard kind == .request, let host = f.host, host.equals(text: filter.host!) else { base.eventsFiltered += 1; return .filtered }
        }

        switch kind {
        case .request:
            guard let method = f.method else { return .invalid("missing field \"method\"") }
            guard let route = f.route else { return .invalid("missing field \"route\"") }
            guard let duration = f.durationMs else { return .invalid("missing field \"duration_ms\"") }
            let routeID = Self.intern(route, in: &routeNames)
            guard routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered }
            let requestError = f.error.map { Self.intern($0, in: &requestIdentities) }
            recordRequest(
                ms: ms, method: Self.intern(method, in: &methods), route: routeID, status: f.status.map { Int($0) },
                durationMs: duration, bytesIn: f.bytesIn, bytesOut: f.bytesOut, requestError: requestError,
                sampleRate: f.sampleRate)
        case .decodeFailure:
            guard let entity = f.entity else { return .invalid("missing field \"entity\"") }
            guard let failureKind = f.kind else { return .invalid("missing field \"kind\"") }
            let routeID = f.route.map { Self.intern($0, in: &routeNames) }
            if filter.route != nil { guard let routeID, routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered } }
            let path = f.path ?? RawString.empty
            let group = decodeGroupID(entity: entity, kind: failureKind, path: path)
            recordDecodeFailure(
                ms: ms, group: group, route: routeID, entity: { entity.string }, kind: { failureKind.string },
                path: { path.string }, key: { f.key?.string }, message: { f.message?.string ?? "" })
        case .error:
            guard let identity = f.identity else { return .invalid("missing field \"identity\"") }
            let routeID = f.route.map { Self.intern($0, in: &routeNames) }
            if filter.route != nil { guard let routeID, routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered } }
            recordError(
                ms: ms, identity: Self.intern(identity, in: &recordedIdentities), route: routeID,
                suppressed: max(0, Int(f.suppressed ?? 0)), message: { f.message?.string ?? "" })
        case .sse:
            guard let phaseBytes = f.phase else { return .invalid("missing field \"phase\"") }
            let routeID = Self.intern(f.route ?? RawString.empty, in: &routeNames)
            guard routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered }
            let p = phaseBytes.bytes
            let phase: SSEPhase = p.is("open") ? .open : p.is("close") ? .close : p.is("reconnect") ? .reconnect : p.is("fail") ? .fail : .other
            recordSSE(
                ms: ms, phase: phase, route: routeID, reason: f.reason.map { Self.intern($0, in: &smallStrings) },
                delayMs: f.delayMs, events: f.events.map { Int($0) }, durationMs: f.durationMs)
        case .log:
            guard let level = f.level else { return .invalid("missing field \"level\"") }
            if filter.route != nil { base.eventsFiltered += 1; return .filtered }
            recordLog(ms: ms, level: Self.intern(level, in: &smallStrings))
        case .dropped:
            guard let count = f.count else { return .invalid("missing field \"count\"") }
            recordDropped(ms: ms, count: Int(count), reason: f.reason?.string ?? "unknown")
        }
        return .counted
    }

    /// Parses `ts`, reusing the last minute when the text starts the same (the common case:
    /// `2026-11-22T10:00:07.123Z` after `2026-11-22T10:00:06.871Z`).
    @inline(__always)
    private mutating func timestamp(_ b: UnsafeRawBufferPointer) -> TraceTimestamp? {
        if b.count == 24, b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "."), b[23] == UInt8(ascii: "Z") {
            let prefix = (b.loadUnaligned(fromByteOffset: 0, as: UInt64.self), b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            let s1 = b[17] &- 48, s2 = b[18] &- 48, m1 = b[20] &- 48, m2 = b[21] &- 48, m3 = b[22] &- 48
            if prefix == minutePrefix, s1 < 6, s2 < 10, m1 < 10, m2 < 10, m3 < 10 {
                return TraceTimestamp(millisecondsSince1970: minuteMs
                    + Int64(s1) * 10_000 + Int64(s2) * 1000 + Int64(m1) * 100 + Int64(m2) * 10 + Int64(m3))
            }
            guard let t = TraceTimestamp.parse(b) else { return nil }
            minutePrefix = prefix
            minuteMs = t.millisecondsSince1970 - (Int64(s1) * 10_000 + Int64(s2) * 1000 + Int64(m1) * 100 + Int64(m2) * 10 + Int64(m3))
            return t
        }
        return TraceTimestamp.parse(b)
    }

    @inline(__always)
    private static func intern(_ s: RawString, in interner: inout ByteInterner) -> Int {
        s.hasEscapes ? interner.id(of: s.string) : interner.id(of: s.bytes)
    }

    /// The group id for entity + kind + path with indices folded, built in a small stack of bytes.
    private mutating func decodeGroupID(entity: RawString, kind: RawString, path: RawString) -> Int {
        if entity.hasEscapes || kind.hasEscapes || path.hasEscapes {
            return decodeGroups.id(of: entity.string + "\u{0}" + kind.string + "\u{0}" + TraceEvent.DecodeFailure.foldIndices(path.string))
        }
        var key: [UInt8] = []
        key.reserveCapacity(entity.bytes.count + kind.bytes.count + path.bytes.count + 2)
        key.append(contentsOf: entity.bytes)
        key.append(0)
        key.append(contentsOf: kind.bytes)
        key.append(0)
        Self.foldIndices(path.bytes, into: &key)
        return key.withUnsafeBytes { decodeGroups.id(of: $0) }
    }

    /// Byte version of ``TraceEvent/DecodeFailure/foldIndices(_:)``.
    static func foldIndices(_ path: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var i = 0
        let n = path.count
        while i < n {
            let c = path[i]
            guard c == UInt8(ascii: "[") else { out.append(c); i += 1; continue }
            var j = i + 1
            while j < n, path[j] >= 48, path[j] <= 57 { j += 1 }
            if j < n, path[j] == UInt8(ascii: "]"), j > i + 1 {
                out.append(contentsOf: [UInt8(ascii: "["), UInt8(ascii: "*"), UInt8(ascii: "]")])
                i = j + 1
            } else {
                // Copy "[digits" and the following byte as they are, as the String version does.
                let end = min(n, j + 1)
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: path[i..<end]))
                i = end
            }
        }
    }
}

/// A string value's raw bytes inside the line being scanned.
struct RawString {
    var bytes: UnsafeRawBufferPointer
    var hasEscapes: Bool

    static var empty: RawString { RawString(bytes: UnsafeRawBufferPointer(start: nil, count: 0), hasEscapes: false) }

    /// The decoded text (allocates; only for values kept as text).
    var string: String {
        if hasEscapes, let text = try? JSONScanner.unescape(bytes) { return text }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True when the decoded value equals `text`.
    func equals(text: String) -> Bool {
        if hasEscapes { return string == text }
        var text = text
        return text.withUTF8 { t in t.count == bytes.count && (t.isEmpty || memcmp(t.baseAddress!, bytes.baseAddress!, t.count) == 0) }
    }
}

/// The fields a report reads from a line, as raw slices and numbers.
struct RawFields {
    var type, ts, method, route, host, error, entity, kind, path, key, message, identity, phase, reason, level: RawString?
    var status, bytesIn, bytesOut, suppressed, events, count: Int64?
    var durationMs, delayMs, sampleRate: Double?

    struct Invalid: Error { var reason: String }

    mutating func scan(_ line: UnsafeRawBufferPointer) throws(RawFields.Invalid) {
        var s = RawLineScanner(line)
        do {
            try s.expect(UInt8(ascii: "{"), "an object")
            if s.peek() == UInt8(ascii: "}") {
                s.position += 1
            } else {
                while true {
                    let key = try s.string()
                    try s.expect(UInt8(ascii: ":"), "':'")
                    if !s.null() {
                        let k = key.hasEscapes ? UnsafeRawBufferPointer(start: nil, count: 0) : key.bytes
                        try read(k, &s)
                    }
                    guard let c = s.peek() else { throw s.fail("unterminated object") }
                    s.position += 1
                    if c == UInt8(ascii: "}") { break }
                    guard c == UInt8(ascii: ",") else { s.position -= 1; throw s.fail("expected ',' or '}'") }
                }
            }
        } catch let failure as RawFields.Invalid {
            throw failure
        } catch {
            throw Invalid(reason: (error as? RawLineScanner.Failure)?.reason ?? "\(error)")
        }
        guard s.peek() == nil else { throw Invalid(reason: "text after the JSON object") }
    }

    /// Reads the value of key `k` into its field, or skips it.
    @inline(__always)
    private mutating func read(_ k: UnsafeRawBufferPointer, _ s: inout RawLineScanner) throws {
        switch k.count {
        case 2:
            if k.is("ts") { ts = try Self.str(&s, k) } else { try s.skipValue() }
        case 3:
            if k.is("key") { key = try Self.str(&s, k) } else { try s.skipValue() }
        case 4:
            if k.is("type") { type = try Self.str(&s, k) }
            else if k.is("host") { host = try Self.str(&s, k) }
            else if k.is("kind") { kind = try Self.str(&s, k) }
            else if k.is("path") { path = try Self.str(&s, k) }
            else { try s.skipValue() }
        case 5:
            if k.is("route") { route = try Self.str(&s, k) }
            else if k.is("error") { error = try Self.str(&s, k) }
            else if k.is("phase") { phase = try Self.str(&s, k) }
            else if k.is("level") { level = try Self.str(&s, k) }
            else if k.is("count") { count = try Self.int(&s, k) }
            else { try s.skipValue() }
        case 6:
            if k.is("method") { method = try Self.str(&s, k) }
            else if k.is("status") { status = try Self.int(&s, k) }
            else if k.is("entity") { entity = try Self.str(&s, k) }
            else if k.is("reason") { reason = try Self.str(&s, k) }
            else if k.is("events") { events = try Self.int(&s, k) }
            else { try s.skipValue() }
        case 7:
            if k.is("message") { message = try Self.str(&s, k) } else { try s.skipValue() }
        case 8:
            if k.is("bytes_in") { bytesIn = try Self.int(&s, k) }
            else if k.is("identity") { identity = try Self.str(&s, k) }
            else if k.is("delay_ms") { delayMs = try Self.dbl(&s, k) }
            else { try s.skipValue() }
        case 9:
            if k.is("bytes_out") { bytesOut = try Self.int(&s, k) } else { try s.skipValue() }
        case 10:
            if k.is("suppressed") { suppressed = try Self.int(&s, k) } else { try s.skipValue() }
        case 11:
            if k.is("duration_ms") { durationMs = try Self.dbl(&s, k) }
            else if k.is("sample_rate") { sampleRate = try Self.dbl(&s, k) }
            else { try s.skipValue() }
        default:
            try s.skipValue()
        }
    }

    @inline(__always)
    private static func str(_ s: inout RawLineScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> RawString {
        do { return try s.string() } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not a string (\(error.reason))")
        }
    }

    @inline(__always)
    private static func int(_ s: inout RawLineScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> Int64 {
        do { return try s.int() } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not a number (\(error.reason))")
        }
    }

    @inline(__always)
    private static func dbl(_ s: inout RawLineScanner, _ k: UnsafeRawBufferPointer) throws(Invalid) -> Double {
        do { return try s.double() } catch {
            throw Invalid(reason: "field \"\(String(decoding: k, as: UTF8.self))\" is not a number (\(error.reason))")
        }
    }
}

extension UnsafeRawBufferPointer {
    /// True when these bytes are exactly `literal` (ASCII); inlined here, unlike the format
    /// module's `equals`, because it runs a dozen times per event.
    @inline(__always)
    func `is`(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard count == n else { return false }
        let lit = literal.utf8Start
        for i in 0..<n where self[i] != lit[i] { return false }
        return true
    }
}
