/// Reads the fields a count of events needs (``CountedRecord``: the collector's ingest tally) from a trace line
/// written plainly, and vouches for the line only when ``TraceRecordScanner`` would accept it with
/// the same values; for any other line it declines, and the caller reads the line in full.
///
/// Counting reads a dozen fields of a line, so building the whole ``TraceRecord`` (every field of
/// the format) through the general ``JSONScanner`` was most of its cost. This reader:
///
/// - first checks the whole line in one pass that the compiler vectorizes: a line holding a control
///   byte is declined; in a line without a backslash or a byte of 0x80 or more (the common case),
///   every string is plain ASCII and a string's end is simply the next `"`. In a line with them, a
///   counted value is read the same way only when it holds neither (otherwise the line is declined:
///   the full reader decodes it), and a value counting does not read (a message with escaped quotes,
///   text in another script) is checked as the full reader checks it (`readRawString`);
/// - walks `{"key":value,...}` without whitespace (the writer's form; anything else is declined),
///   finding each key in a fixed table of the format's fields; a key it does not know is declined;
/// - checks every value by the rule the full scanner applies to that field (string, integer or
///   number in ``TraceRecord/Limits``, boolean, object), reading numbers with ``JSONScanner``'s own
///   `readInt` and `readDouble` and skipping objects with its `skipValue`, so numbers mean the same;
///   a repeated key keeps its last value, `null` included, as in the full scanner;
/// - applies the full scanner's required fields and `ts` check (``MinuteTimestamps``) and takes
///   the outcome and weight from ``RequestOutcome`` and ``RequestWeight``.
///
/// Anything it is not sure of (an invalid line, a header, an unknown event type, a value out of
/// range, an array of strings) is declined rather than judged: the full scanner decides, and names
/// the problem. So the lines it vouches for are a subset on which both readers agree, which the
/// differential tests check against the full reader on hostile and realistic lines.
///
/// ```swift
/// var counting = CountingLineScanner()
/// if counting.scan(line) { tally.add(counting.record) } else { /* TraceRecordScanner, then CountedRecord(record) */ }
/// ```
package struct CountingLineScanner {
    /// The last line vouched for.
    package private(set) var record = CountedRecord()
    private var timestamps = MinuteTimestamps()
    private let table = CountingLineScanner.fieldTable
    /// The key that followed each field in the last lines, per event type: lines of one type list
    /// their keys in a few fixed orders, so each key is first compared in place with the one that
    /// followed the previous field last time, and looked up only when it differs. Keyed by the
    /// previous field (as ``TraceRecordScanner`` does), so an optional field left out costs one
    /// miss, not one for every key after it; and by type, so a file mixing types (requests between
    /// SSE events and errors) does not miss after each change of type. Row 0 holds the first key
    /// (`type`) and the keys of types without a row of their own.
    private var expected = [Slot](repeating: Slot(), count: CountingLineScanner.rows * CountingLineScanner.rowLength)
    /// A row: the line's first key, then the key after each key of ``fields``.
    private static let rowLength = CountingLineScanner.fields.count + 1
    private static let rows = 8

    package init() {}

    /// True when `line` (without its newline) is an event this reader vouches for, now in ``record``;
    /// false: not decided here (the line may be valid or not), read it with ``TraceRecordScanner``.
    package mutating func scan(_ line: UnsafeRawBufferPointer) -> Bool {
        let n = line.count
        guard n >= 2, let raw = line.baseAddress else { return false }
        let p = raw.assumingMemoryBound(to: UInt8.self)
        guard p[0] == UInt8(ascii: "{"), p[1] == UInt8(ascii: "\"") else { return false }
        if Self.isPlain(p, n) { return read(line, p, n, PlainLine.self) }
        guard !Self.hasControl(p, n) else { return false }
        return read(line, p, n, SpecialLine.self)
    }

    /// Whether a line holds a backslash or a byte of 0x80 or more, as a type: `read` is compiled once
    /// for each, so the plain lines (nearly all) carry none of the checks the others need.
    private protocol LineKind { static var special: Bool { get } }
    private enum PlainLine: LineKind { static var special: Bool { false } }
    private enum SpecialLine: LineKind { static var special: Bool { true } }

    private mutating func read<Kind: LineKind>(_ line: UnsafeRawBufferPointer, _ p: UnsafePointer<UInt8>, _ n: Int, _ kind: Kind.Type) -> Bool {
        let special = Kind.special
        var type, ts, method, route, host, error, entity, failureKind, path, identity, phase, reason, level, ignored: RawText?
        var status, suppressed, code, count, ignoredInt: Int64?
        var duration, sampleRate, ignoredDouble: Double?
        var i = 1
        var row = 0
        // Where in the row the key expected next is: the first key, then the one after each key.
        var after = 0
        while true {
            // p[i] is the opening quote of a key.
            let keyStart = i + 1
            let field: Field
            // The key expected here when the key here is that one: its bytes followed by the closing
            // quote (a known key holds no quote, so that quote ends the key), compared in place
            // without searching for the quote first.
            let slot = row &+ after
            let guess = expected[slot]
            if guess.key.isAt(p, keyStart, n) {
                field = guess.field
                after = guess.index &+ 1
                i = keyStart &+ guess.key.length &+ 1
            } else {
                guard let keyEnd = Self.quote(p, keyStart, n),
                      let found = self.field(p, keyStart, keyEnd - keyStart, n, expectedAt: slot) else { return false }
                field = found.field
                after = found.index &+ 1
                i = keyEnd + 1
            }
            guard i + 1 < n, p[i] == UInt8(ascii: ":") else { return false }
            i += 1
            let ok: Bool
            switch field {
            case .type:
                ok = Self.string(p, n, &i, &type, special: special)
                if ok, let type { row = Self.row(of: type.bytes) * Self.rowLength }
            case .ts: ok = Self.string(p, n, &i, &ts, special: special)
            case .method: ok = Self.string(p, n, &i, &method, special: special)
            case .route: ok = Self.string(p, n, &i, &route, special: special)
            case .host: ok = Self.string(p, n, &i, &host, special: special)
            case .error: ok = Self.string(p, n, &i, &error, special: special)
            case .entity: ok = Self.string(p, n, &i, &entity, special: special)
            case .kind: ok = Self.string(p, n, &i, &failureKind, special: special)
            case .path: ok = Self.string(p, n, &i, &path, special: special)
            case .identity: ok = Self.string(p, n, &i, &identity, special: special)
            case .phase: ok = Self.string(p, n, &i, &phase, special: special)
            case .reason: ok = Self.string(p, n, &i, &reason, special: special)
            case .level: ok = Self.string(p, n, &i, &level, special: special)
            case .otherString: ok = special ? Self.anyString(line, &i) : Self.string(p, n, &i, &ignored, special: false)
            case .status: ok = Self.int(line, &i, TraceRecord.Limits.status, &status)
            case .suppressed: ok = Self.int(line, &i, TraceRecord.Limits.count, &suppressed)
            case .code: ok = Self.int(line, &i, 0...65_535, &code)
            case .count: ok = Self.int(line, &i, TraceRecord.Limits.count, &count)
            case .anyInt: ok = Self.int(line, &i, Int64.min...Int64.max, &ignoredInt)
            case .portInt: ok = Self.int(line, &i, 1...65_535, &ignoredInt)
            case .countInt: ok = Self.int(line, &i, TraceRecord.Limits.count, &ignoredInt)
            case .attemptInt: ok = Self.int(line, &i, TraceRecord.Limits.attempt, &ignoredInt)
            case .bytesInt: ok = Self.int(line, &i, TraceRecord.Limits.bytes, &ignoredInt)
            case .duration: ok = Self.double(line, &i, TraceRecord.Limits.milliseconds, &duration)
            case .sampleRate: ok = Self.double(line, &i, -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude, &sampleRate)
            case .milliseconds: ok = Self.double(line, &i, TraceRecord.Limits.milliseconds, &ignoredDouble)
            case .bool: ok = Self.bool(line, &i)
            case .object: ok = Self.object(line, &i)
            case .stringArray: ok = Self.null(p, n, &i)
            }
            guard ok, i < n else { return false }
            if p[i] == UInt8(ascii: ",") {
                i += 1
                guard i < n, p[i] == UInt8(ascii: "\"") else { return false }
                continue
            }
            guard p[i] == UInt8(ascii: "}"), i + 1 == n else { return false }
            break
        }

        guard let type else { return false }
        let kind: TraceRecord.Kind
        let t = type.bytes
        switch t.count {
        case 7 where t.equals("request"): kind = .request
        case 14 where t.equals("decode_failure"): kind = .decodeFailure
        case 5 where t.equals("error"): kind = .error
        case 3 where t.equals("sse"): kind = .sse
        case 3 where t.equals("log"): kind = .log
        case 7 where t.equals("dropped"): kind = .dropped
        case 9 where t.equals("websocket"): kind = .websocket
        default: return false  // a header or an unknown type: the full reader's to judge
        }
        guard let ts, timestamps.milliseconds(ts.bytes) != nil else { return false }
        var outcome = RequestOutcome.success
        var weight = 1.0
        var ignoredSampleRate = false
        switch kind {
        case .request:
            guard method != nil, route != nil, duration != nil else { return false }
            outcome = status.map { RequestOutcome.of(status: Int($0)) } ?? RequestOutcome.ofTransportFailure(identity: error?.bytes)
            (weight, ignoredSampleRate) = RequestWeight.of(outcome: outcome, sampleRate: sampleRate)
        case .decodeFailure: guard entity != nil, failureKind != nil else { return false }
        case .error: guard identity != nil else { return false }
        case .sse, .websocket: guard phase != nil else { return false }
        case .log: guard level != nil else { return false }
        case .dropped: guard count != nil else { return false }
        }
        record.kind = kind
        record.method = method
        record.route = route
        record.host = host
        record.status = status.map { Int($0) }
        record.durationMs = duration
        record.error = error
        record.outcome = outcome
        record.weight = weight
        record.ignoredSampleRate = ignoredSampleRate
        record.entity = entity
        record.failureKind = failureKind
        record.path = path
        record.identity = identity
        record.suppressed = suppressed
        record.phase = phase
        record.reason = reason
        record.code = code
        record.count = count
        return true
    }

    // MARK: - Bytes

    /// True when the line holds a byte below 0x20: one pass the compiler turns into vector code.
    @inline(__always)
    private static func hasControl(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var marks: UInt8 = 0
        // The high bit of `(c - 0x20) & ~c` marks a byte below 0x20 (not one of 0x80 or more).
        for k in 0..<n { marks |= (p[k] &- 0x20) & ~p[k] }
        return marks & 0x80 != 0
    }

    /// True when the bytes hold no backslash, no control byte and no byte of 0x80 or more: one pass
    /// the compiler turns into vector code, after which a string's end is its next quote.
    @inline(__always)
    private static func isPlain(_ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var marks: UInt8 = 0
        for k in 0..<n {
            let c = p[k]
            // The high bit of `c - 0x20` marks a control byte; that of `c` a byte of 0x80 or more.
            marks |= (c &- 0x20) | c | (c == UInt8(ascii: "\\") ? 0x80 : 0)
        }
        return marks & 0x80 == 0
    }

    /// Offset of the first `"` at or after `from`, eight bytes at a time; nil when there is none.
    @inline(__always)
    private static func quote(_ p: UnsafePointer<UInt8>, _ from: Int, _ n: Int) -> Int? {
        var i = from
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let raw = UnsafeRawPointer(p)
        while i + 8 <= n {
            let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ (ones &* 0x22)
            // The lowest marked byte is exactly the first quote (a borrow only runs up from a
            // match, and a byte of 0x80 or more is never marked by itself).
            let hits = (x &- ones) & ~x & highs
            if hits != 0 { return i + hits.trailingZeroBitCount / 8 }
            i += 8
        }
        while i < n {
            if p[i] == UInt8(ascii: "\"") { return i }
            i += 1
        }
        return nil
    }

    @inline(__always)
    private static func isNull(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: Int) -> Bool {
        i + 4 <= n && p[i] == UInt8(ascii: "n") && p[i + 1] == UInt8(ascii: "u") && p[i + 2] == UInt8(ascii: "l") && p[i + 3] == UInt8(ascii: "l")
    }

    @inline(__always)
    private static func null(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int) -> Bool {
        guard isNull(p, n, i) else { return false }
        i += 4
        return true
    }

    // MARK: - Values, by the full scanner's rules

    /// A counted string value (or null). In a line with escapes or UTF-8 (`special`), a value holding
    /// neither ends at its first quote, and one holding either is declined (the full reader decodes it).
    @inline(__always)
    private static func string(_ p: UnsafePointer<UInt8>, _ n: Int, _ i: inout Int, _ out: inout RawText?, special: Bool) -> Bool {
        if p[i] == UInt8(ascii: "\"") {
            guard let end = quote(p, i + 1, n) else { return false }
            if special, !isPlain(p + i + 1, end - i - 1) { return false }
            out = RawText(bytes: UnsafeRawBufferPointer(start: p + i + 1, count: end - i - 1), hasEscapes: false)
            i = end + 1
            return true
        }
        guard null(p, n, &i) else { return false }
        out = nil
        return true
    }

    /// A string value counting does not read (or null), in a line with escapes or UTF-8: checked by
    /// the full reader's own rules (`readRawString`: escapes, surrogate pairs, UTF-8), never decoded.
    @inline(never)
    private static func anyString(_ line: UnsafeRawBufferPointer, _ i: inout Int) -> Bool {
        var s = JSONScanner(line)
        s.position = i
        if !s.consumeNull() {
            guard s.peek() == UInt8(ascii: "\""), (try? s.readRawString()) != nil else { return false }
        }
        i = s.position
        return true
    }

    @inline(__always)
    private static func int(_ line: UnsafeRawBufferPointer, _ i: inout Int, _ range: ClosedRange<Int64>, _ out: inout Int64?) -> Bool {
        // The writer's form (`JSONScanner.plainInt`) then `,` or `}`, read as `readInt` reads it;
        // anything else (null, a fraction, an exponent, more digits) by `readInt` itself.
        let p = line.baseAddress!.assumingMemoryBound(to: UInt8.self), n = line.count
        if let (value, j) = JSONScanner.plainInt(p, n, from: i), j < n, p[j] == UInt8(ascii: ",") || p[j] == UInt8(ascii: "}") {
            guard range.contains(value) else { return false }
            out = value
            i = j
            return true
        }
        return slowInt(line, &i, range, &out)
    }

    /// ``int(_:_:_:_:)`` of any other form, by `readInt` itself: apart, so the common path carries
    /// no frame for the general scanner.
    @inline(never)
    private static func slowInt(_ line: UnsafeRawBufferPointer, _ i: inout Int, _ range: ClosedRange<Int64>, _ out: inout Int64?) -> Bool {
        var s = JSONScanner(line)
        s.position = i
        if s.consumeNull() { out = nil; i = s.position; return true }
        guard let v = try? s.readInt(), range.contains(v) else { return false }
        out = v
        i = s.position
        return true
    }

    @inline(__always)
    private static func double(_ line: UnsafeRawBufferPointer, _ i: inout Int, _ range: ClosedRange<Double>, _ out: inout Double?) -> Bool {
        // The writer's form inline: -?(0|[1-9][0-9]*)(.[0-9]+)? of at most 15 digits then `,` or `}`,
        // computed as `readDouble` computes it (exact: the mantissa over an exact power of ten);
        // anything else (null, an exponent, more digits) by `readDouble` itself.
        let p = line.baseAddress!.assumingMemoryBound(to: UInt8.self), n = line.count
        var j = i
        let negative = p[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        let start = j
        var mantissa: UInt64 = 0
        while j < n {
            let digit = p[j] &- 48
            if digit >= 10 { break }
            mantissa = mantissa &* 10 &+ UInt64(digit)
            j &+= 1
        }
        var digits = j &- start, fraction = 0
        var plain = j > start && (j - start == 1 || p[start] != 48)
        if plain, j < n, p[j] == UInt8(ascii: ".") {
            j += 1
            let fractionStart = j
            while j < n {
                let digit = p[j] &- 48
                if digit >= 10 { break }
                mantissa = mantissa &* 10 &+ UInt64(digit)
                j &+= 1
            }
            fraction = j &- fractionStart
            digits &+= fraction
            plain = j > fractionStart
        }
        if plain, digits <= 15, j < n, p[j] == UInt8(ascii: ",") || p[j] == UInt8(ascii: "}") {
            let magnitude = Double(mantissa) / JSONScanner.powersOfTen[fraction]
            let value = negative ? -magnitude : magnitude
            guard value.isFinite, range.contains(value) else { return false }
            out = value
            i = j
            return true
        }
        return slowDouble(line, &i, range, &out)
    }

    /// ``double(_:_:_:_:)`` of any other form, by `readDouble` itself.
    @inline(never)
    private static func slowDouble(_ line: UnsafeRawBufferPointer, _ i: inout Int, _ range: ClosedRange<Double>, _ out: inout Double?) -> Bool {
        var s = JSONScanner(line)
        s.position = i
        if s.consumeNull() { out = nil; i = s.position; return true }
        guard let v = try? s.readDouble(), v.isFinite, range.contains(v) else { return false }
        out = v
        i = s.position
        return true
    }

    private static func bool(_ line: UnsafeRawBufferPointer, _ i: inout Int) -> Bool {
        var s = JSONScanner(line)
        s.position = i
        guard s.consumeNull() || (try? s.readBool()) != nil else { return false }
        i = s.position
        return true
    }

    private static func object(_ line: UnsafeRawBufferPointer, _ i: inout Int) -> Bool {
        var s = JSONScanner(line)
        s.position = i
        if !s.consumeNull() {
            guard s.peek() == UInt8(ascii: "{"), (try? s.skipValue()) != nil else { return false }
        }
        i = s.position
        return true
    }

    // MARK: - Keys

    /// What the full scanner makes of each key of the format: a field counting reads, or a rule to check.
    private enum Field: UInt8 {
        case type, ts, method, route, host, error, entity, kind, path, identity, phase, reason, level, otherString
        case status, suppressed, code, count, anyInt, portInt, countInt, attemptInt, bytesInt
        case duration, sampleRate, milliseconds
        case bool, object, stringArray
    }

    /// Every key ``TraceRecordScanner`` reads, with its rule there (`read(_:_:ts:started:)`): a key
    /// missing here is declined, never misread.
    private static let fields: [(StaticString, Field)] = [
        ("type", .type), ("ts", .ts), ("method", .method), ("route", .route), ("host", .host), ("error", .error),
        ("entity", .entity), ("kind", .kind), ("path", .path), ("identity", .identity), ("phase", .phase),
        ("reason", .reason), ("level", .level),
        ("key", .otherString), ("app", .otherString), ("file", .otherString), ("message", .otherString),
        ("session", .otherString), ("span_id", .otherString), ("started", .otherString), ("trace_id", .otherString),
        ("protocol", .otherString), ("producer", .otherString), ("closed_by", .otherString), ("app_version", .otherString),
        ("last_event_id", .otherString), ("source", .otherString), ("format", .otherString),
        ("status", .status), ("suppressed", .suppressed), ("code", .code), ("count", .count),
        ("line", .anyInt), ("version", .anyInt), ("port", .portInt),
        ("pings", .countInt), ("events", .countInt), ("messages_in", .countInt), ("messages_out", .countInt),
        ("attempt", .attemptInt), ("bytes_in", .bytesInt), ("bytes_out", .bytesInt),
        ("duration_ms", .duration), ("sample_rate", .sampleRate),
        ("dns_ms", .milliseconds), ("tls_ms", .milliseconds), ("ttfb_ms", .milliseconds), ("delay_ms", .milliseconds),
        ("connect_ms", .milliseconds), ("silence_ms", .milliseconds), ("ping_rtt_ms", .milliseconds),
        ("reused", .bool), ("metadata", .object), ("user_info", .object), ("underlying", .stringArray),
    ]

    /// A key of the format and what the full scanner makes of it.
    private struct Slot {
        var key = PlainKey()
        var field = Field.type
        /// The key's place in ``fields``: several keys share a rule (`bytes_in` and `bytes_out`),
        /// so the key expected next is looked up by the key itself, not by its rule.
        var index = 0
    }

    private static let slots = 256

    /// The keys by hash of their first sixteen bytes, open addressing; built once, never written again.
    nonisolated(unsafe) private static let fieldTable: UnsafePointer<Slot> = {
        let table = UnsafeMutablePointer<Slot>.allocate(capacity: slots)
        table.initialize(repeating: Slot(), count: slots)
        for (index, (name, field)) in fields.enumerated() {
            let p = name.utf8Start, n = name.utf8CodeUnitCount
            let key = PlainKey(UnsafeRawBufferPointer(start: p, count: n))!
            var h = hash(key.w0, key.w1, n)
            while table[h].key.length != 0 { h = (h + 1) & (slots - 1) }
            table[h] = Slot(key: key, field: field, index: index)
        }
        return UnsafePointer(table)
    }()

    @inline(__always)
    private static func hash(_ w0: UInt64, _ w1: UInt64, _ length: Int) -> Int {
        Int(truncatingIfNeeded: ((w0 &* 0x9E37_79B9_7F4A_7C15) ^ (w1 &* 0xC2B2_AE3D_27D4_EB4F) ^ (UInt64(length) &* 0x1656_67B1_9E37_79F9)) >> 56)
    }

    /// The row of ``expected`` for lines of this `type` (a few comparisons; 0 for any other type).
    @inline(__always)
    private static func row(of type: UnsafeRawBufferPointer) -> Int {
        guard let first = type.first else { return 0 }
        switch type.count {
        case 7: return first == UInt8(ascii: "r") ? 1 : 2  // request, dropped
        case 14: return 3  // decode_failure
        case 5: return 4  // error
        case 3: return first == UInt8(ascii: "s") ? 5 : 6  // sse, log
        case 9: return 7  // websocket
        default: return 0
        }
    }

    /// The field of the key at `start` (not the one expected where it is), looked up in the table
    /// and expected at `slot` of ``expected`` from now on.
    private mutating func field(_ p: UnsafePointer<UInt8>, _ start: Int, _ length: Int, _ n: Int, expectedAt slot: Int) -> Slot? {
        guard let key = PlainKey(UnsafeRawBufferPointer(start: p + start, count: length)) else { return nil }
        var h = Self.hash(key.w0, key.w1, length)
        while true {
            let found = table[h]
            if found.key.length == 0 { return nil }
            if found.key == key {
                expected[slot] = found
                return found
            }
            h = (h + 1) & (Self.slots - 1)
        }
    }
}
