import APITraceFormat
import Foundation
import Testing

/// The lean reader counting uses (``CountingLineScanner``) against the one line decoder
/// (``TraceRecordScanner``): on every line it vouches for, the full reader must call the line an
/// event with the same counted fields; realistic lines must be vouched for (or it would save
/// nothing); and read as a file, counting-only records count exactly what full records count.
@Suite("Counting line reader")
struct CountingLineScannerTests {
    /// The fields counting reads, as text, for comparing two readers.
    static func counted(_ r: CountedRecord) -> [String] {
        func t(_ v: RawText?) -> String { v.map { "\"" + $0.string + "\"" } ?? "nil" }
        func n<T>(_ v: T?) -> String { v.map { "\($0)" } ?? "nil" }
        return [
            "\(r.kind)", t(r.method), t(r.route), t(r.host), n(r.status), n(r.durationMs), t(r.error), "\(r.outcome)",
            "\(r.weight)", "\(r.ignoredSampleRate)", t(r.entity), t(r.failureKind), t(r.path), t(r.identity), n(r.suppressed),
            t(r.phase), t(r.reason), n(r.code), n(r.count),
        ]
    }

    /// One line of each type, as the writer writes them.
    static let bases: [String] = [
        #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","session":"s-1","trace_id":"520060a39b7be8f0e3603d380f067980","method":"GET","route":"/apps/{id}","host":"api.example.com","status":503,"duration_ms":12.5,"bytes_in":2650,"bytes_out":0,"attempt":1}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:02.250Z","method":"POST","route":"/auth/refresh","host":"api.example.com","duration_ms":30000,"error":"URLError.cancelled","attempt":2,"dns_ms":1.5,"connect_ms":3,"tls_ms":4.25,"ttfb_ms":20,"protocol":"h2","reused":false,"port":443}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:03.999Z","method":"GET","route":"/news","status":200,"duration_ms":0.001,"sample_rate":0.25,"span_id":"ab12"}"#,
        #"{"type":"decode_failure","ts":"2026-11-22T10:00:04.000Z","session":"s-2","route":"/apps","entity":"App","kind":"keyNotFound","path":"data.apps[3].stability","key":"stability","message":"missing"}"#,
        #"{"type":"error","ts":"2026-11-22T10:00:05.000Z","identity":"NewsError.offline","message":"offline","user_info":{"screen":"news","attempt":"2"},"route":"/news","file":"NewsRepository.swift","line":88,"suppressed":3}"#,
        #"{"type":"sse","ts":"2026-11-22T10:00:06.000Z","phase":"close","route":"/news/stream","attempt":1,"last_event_id":"41","reason":"network_error","events":12,"delay_ms":1000,"status":200,"duration_ms":22.7}"#,
        #"{"type":"websocket","ts":"2026-11-22T10:00:07.000Z","phase":"close","route":"/live","code":1006,"closed_by":"server","reason":"gone","messages_in":4,"messages_out":2,"pings":1,"ping_rtt_ms":12.5,"silence_ms":300}"#,
        #"{"type":"log","ts":"2026-11-22T10:00:08.000Z","level":"info","message":"refreshed","metadata":{"feed":"top","n":[1,2,{"x":null}]},"source":"NewsClient"}"#,
        #"{"type":"dropped","ts":"2026-11-22T10:00:09.000Z","count":5,"reason":"buffer_full"}"#,
        #"{"type":"header","format":"apitrace","version":1,"producer":"p1","app":"test","app_version":"1.0","started":"2026-11-22T10:00:00.000Z"}"#,
        #"{"type":"future_event","ts":"2026-11-22T10:00:09.000Z"}"#,
    ]

    /// Every key of the format (Docs/trace-format.md), and one that is not.
    static let keys = [
        "type", "ts", "session", "trace_id", "span_id", "method", "route", "host", "status", "duration_ms", "bytes_in", "bytes_out",
        "error", "attempt", "sample_rate", "dns_ms", "connect_ms", "tls_ms", "ttfb_ms", "protocol", "reused", "port", "entity",
        "kind", "path", "key", "message", "identity", "suppressed", "file", "line", "user_info", "underlying", "phase", "reason",
        "delay_ms", "events", "last_event_id", "code", "closed_by", "messages_in", "messages_out", "pings", "ping_rtt_ms",
        "silence_ms", "level", "source", "metadata", "format", "version", "producer", "app", "app_version", "started", "count",
        "not_a_field",
    ]

    /// Values of every type, on and past each field's bounds, and not JSON at all.
    static let values = [
        "null", #""x""#, #""""#, #""GET""#, #""2026-11-22T10:00:01.000Z""#, #""2026-11-22T10:00:60.000Z""#, #""1969-12-31T23:59:59.000Z""#,
        #""URLError.cancelled""#, #""URLError.notConnectedToInternet""#, #""request""#, #""header""#, #""dropped""#,
        "0", "-0", "1", "-1", "99", "100", "999", "1000", "65535", "65536", "1000000", "1000001", "1000000000000", "1000000000001",
        "9007199254740992", "9007199254740993", "8640000000", "8640000000.5", "9223372036854775807", "99999999999999999999",
        "-9223372036854775808", "1.5", "0.0001", "0.00009", "2.5e1", "1E2", "1e400", "-1e400", "0.5", "1.0000000000000002",
        "01", "1.", ".5", "1e", "-", "+1", "0x10", "true", "false", "tru", "nul", "{}", #"{"a":[1,{"b":null}]}"#, "[]", #"["a","b"]"#,
        "[1]", #""\u0041""#, #""a\"b""#, "\"a\tb\"", #""é""#, #""unterminated"#, "{", "[[", #"{"a":}"#,
    ]

    static func lines() -> [String] {
        var out = bases
        for base in bases {
            let body = base.dropFirst().dropLast()
            for key in keys {
                for value in values {
                    out.append("{\"\(key)\":\(value),\(body)}")  // first, then overridden when repeated
                    out.append("{\(body),\"\(key)\":\(value)}")  // last: wins when repeated
                }
            }
            // Structure: whitespace, trailing text, cuts at every byte, an empty object.
            out.append(" " + base)
            out.append(base + " ")
            out.append(base.replacingOccurrences(of: ",", with: ", "))
            out.append(base.replacingOccurrences(of: ":", with: " :"))
            out.append(base + "x")
            out.append(base + "}")
            for cut in 0..<base.utf8.count { out.append(String(decoding: Array(base.utf8)[..<cut], as: UTF8.self)) }
        }
        out.append("{}")
        out.append("[]")
        // Deep nesting in an unused object, past and within the limit.
        for depth in [400, 600] {
            out.append(#"{"type":"log","ts":"2026-11-22T10:00:08.000Z","level":"info","metadata":{"a":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}}")
        }
        // A label with every printable byte (quotes and backslashes escaped), and long labels.
        let printable = (0x20..<0x7F).map { c -> String in c == 0x22 ? "\\\"" : c == 0x5C ? "\\\\" : String(UnicodeScalar(UInt8(c))) }.joined()
        out.append(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":""# + printable + #"","duration_ms":1}"#)
        out.append(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":""# + String(repeating: "/x", count: 40_000) + #"","duration_ms":1}"#)
        out.append(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/a","duration_ms":1,""# + String(repeating: "k", count: 17) + #"":1}"#)
        return out
    }

    /// Byte-level mutations of the bases, with a fixed seed.
    static func mutants(count: Int) -> [[UInt8]] {
        let alphabet: [[UInt8]] = ["\\", "\"", "u", "0", "9", "{", "}", "[", "]", ",", ":", " ", "-", ".", "e", "n", "t", "null", "\\u0041", "1e999"].map { Array($0.utf8) }
            + [[0x01], [0x1F], [0x7F], [0xC3, 0xA9], [0xC3], [0xFF], [0x00]]
        var rng = UInt64(20261125)
        func next(_ n: Int) -> Int { rng = rng &* 6364136223846793005 &+ 1442695040888963407; return Int(rng >> 33) % n }
        return (0..<count).map { _ in
            var line = Array(bases[next(bases.count)].utf8)
            for _ in 0..<(1 + next(3)) {
                let at = next(line.count + 1)
                let piece = alphabet[next(alphabet.count)]
                switch next(3) {
                case 0: line.insert(contentsOf: piece, at: at)
                case 1 where at < line.count: line.replaceSubrange(at..<min(line.count, at + piece.count), with: piece)
                default: if at < line.count { line.remove(at: at) }
                }
            }
            return line
        }
    }

    @Test("every line the counting reader vouches for is an event to the full reader, with the same counted fields")
    func agreesWithTheFullReader() {
        var full = TraceRecordScanner()
        var lean = CountingLineScanner()
        let corpus = Self.lines().map { Array($0.utf8) } + Self.mutants(count: 20_000)
        var vouched = 0, events = 0
        for line in corpus {
            line.withUnsafeBytes { bytes in
                let result = full.scan(bytes)
                if result == .event { events += 1 }
                guard lean.scan(bytes) else { return }
                vouched += 1
                #expect(result == .event, "vouched for a line the full reader calls \(result): \(String(decoding: bytes, as: UTF8.self))")
                if result == .event {
                    #expect(Self.counted(lean.record) == Self.counted(CountedRecord(full.record)), "\(String(decoding: bytes, as: UTF8.self))")
                }
            }
        }
        // Both outcomes are exercised at scale: many lines vouched for, many declined.
        #expect(vouched > 10_000 && events - vouched > 1_000, "\(vouched) vouched of \(events) events, \(corpus.count) lines")
    }

    @Test("lines as the writer writes them are vouched for: the lean path is the one taken")
    func realisticLinesAreVouchedFor() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Samples/Traces").path
        var lean = CountingLineScanner()
        var full = TraceRecordScanner()
        var events = 0, vouched = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where name.hasSuffix(".jsonl.gz") {
            TraceFileReader(path: folder + "/" + name).forEachRecordLine(header: { _, _ in true }) { _, line, _ in
                events += 1
                if lean.scan(line) {
                    vouched += 1
                    #expect(full.scan(line) == .event)
                    #expect(Self.counted(lean.record) == Self.counted(CountedRecord(full.record)))
                }
                return true
            }
        }
        #expect(events > 1_000)
        // The samples hold escaped messages and non-ASCII text, which go to the full reader.
        #expect(Double(vouched) >= 0.8 * Double(events), "\(vouched) of \(events) sample events vouched for")
    }

    @Test("read as a file for counting, lines count exactly as read in full: events, skipped lines, warnings")
    func fileReadsAgree() {
        let corpus = Self.lines().filter { !$0.contains("\"header\"") }.map { Array($0.utf8) } + Self.mutants(count: 5_000)
        let header = Array(#"{"type":"header","format":"apitrace","version":1,"producer":"p1","app":"test","app_version":"1.0","started":"2026-11-22T10:00:00.000Z"}"#.utf8)
        // As the collector reads an upload: decompressed bytes fed to a stream in blocks.
        let file: [UInt8] = Array(([header] + corpus.filter { !$0.contains(0x0A) }).joined(separator: [0x0A])) + [0x0A]
        func read(counted: Bool) -> (TraceFileReader.RecordScan, [[String]]) {
            let stream = TraceRecordStream(name: "corpus")
            var records: [[String]] = []
            var offset = 0
            while offset < file.count {
                let block = Array(file[offset..<min(file.count, offset + 65_536)])
                offset += block.count
                _ = block.withUnsafeBytes { bytes in
                    if counted {
                        stream.feed(bytes, counted: { records.append(Self.counted($0)); return true })
                    } else {
                        stream.feed(bytes) { record, _, _ in records.append(Self.counted(CountedRecord(record))); return true }
                    }
                }
            }
            return (stream.finish(), records)
        }
        let (leanScan, leanRecords) = read(counted: true)
        let (fullScan, fullRecords) = read(counted: false)
        #expect(leanRecords == fullRecords)
        #expect(leanScan.events == fullScan.events && leanScan.events > 10_000)
        #expect(leanScan.invalidLines == fullScan.invalidLines && leanScan.invalidLines > 1_000)
        #expect(leanScan.unknownTypes == fullScan.unknownTypes)
        #expect(leanScan.ignoredSampleRates == fullScan.ignoredSampleRates)
        #expect(leanScan.warnings.map(\.description) == fullScan.warnings.map(\.description))
    }

    // A key is first matched against the one met at its position in the previous lines, by its
    // bytes and the quote after them: keys that begin another key (`message` / `messages_in`,
    // `bytes_in` / `bytes_out`, `app` / `app_version`), keys cut before their quote and unknown
    // keys in a known key's place must all be read as the full reader reads them.
    @Test("keys that begin one another, alternating at one position from line to line and between event types, read as the full reader reads them")
    func expectedKeysAtAPosition() {
        // Keys are expected per event type, so lines of several types take turns.
        let heads = [
            #"{"type":"websocket","ts":"2026-11-22T10:00:07.000Z","phase":"close","route":"/live","#,
            #"{"type":"sse","ts":"2026-11-22T10:00:07.000Z","phase":"close","route":"/live","#,
            #"{"type":"dropped","ts":"2026-11-22T10:00:07.000Z","count":3,"reason":"x","#,
            #"{"type":"request","ts":"2026-11-22T10:00:07.000Z","method":"GET","route":"/a","duration_ms":1,"#,
        ]
        let middles = [
            #""message":"x""#, #""messages_in":4"#, #""messages_out":2"#, #""messages_in":"x""#, #""message":4"#,
            #""bytes_in":1"#, #""bytes_out":-1"#, #""app":"a""#, #""app_version":"1""#, #""ap":"1""#, #""app_versions":"1""#,
            #""code":1006"#, #""count":5"#, #""code":70000"#, #""messages_i":4"#, #""message"#, #""messages_in"#,
        ]
        var lean = CountingLineScanner()
        var full = TraceRecordScanner()
        var vouched = 0
        for round in 0..<3 {
            for (k, middle) in middles.enumerated() {
                let other = middles[(k * 7 + round) % middles.count]
                let head = heads[(k + round) % heads.count]
                for line in [head + middle + "}", head + middle + "," + other + "}", head + other + "," + middle + "}", head + middle] {
                    Array(line.utf8).withUnsafeBytes { bytes in
                        let result = full.scan(bytes)
                        guard lean.scan(bytes) else { return }
                        vouched += 1
                        #expect(result == .event, "vouched for a line the full reader calls \(result): \(line)")
                        if result == .event {
                            #expect(Self.counted(lean.record) == Self.counted(CountedRecord(full.record)), "\(line)")
                        }
                    }
                }
            }
        }
        #expect(vouched >= 40, "\(vouched) lines vouched for")
    }

    // In a line with a backslash or a byte of 0x80 or more, a string counting does not read (a
    // message with escaped quotes, text in another script) is checked by the full reader's rules
    // and the line vouched for; a counted string holding an escape or such a byte declines the line.
    @Test("escapes and UTF-8: checked as the full reader checks them in strings counting skips, declined in counted strings")
    func escapesAndUTF8() {
        let texts = [
            #"a\"b"#, #"\u0041"#, #"\ud83d\ude00"#, #"\ud83d"#, #"\ude00"#, #"\x"#, "é", "日本", #"\\"#, #"x\\"#, #"\/"#, #"\n"#,
            #"\u00e9"#, #"\uzzzz"#, #"a\"#, "\u{7F}", "\t",
        ]
        let keys = [
            "message", "session", "key", "file", "trace_id", "app", "route", "host", "method", "error", "entity", "kind", "path",
            "identity", "phase", "reason", "level", "type", "ts", #"mess\u0061ge"#, #"rou\"te"#,
        ]
        var lines: [String] = []
        for base in Self.bases {
            let body = base.dropFirst().dropLast()
            for text in texts {
                for key in keys {
                    lines.append("{" + body + #",""# + key + #"":""# + text + #""}"#)
                    lines.append(#"{""# + key + #"":"x"# + text + #"y","# + body + "}")
                }
            }
        }
        var full = TraceRecordScanner()
        var lean = CountingLineScanner()
        var vouchedWithEscapes = 0, declinedCounted = 0
        for line in lines {
            Array(line.utf8).withUnsafeBytes { bytes in
                let result = full.scan(bytes)
                guard lean.scan(bytes) else {
                    if result == .event { declinedCounted += 1 }
                    return
                }
                vouchedWithEscapes += 1
                #expect(result == .event, "vouched for a line the full reader calls \(result): \(line)")
                if result == .event {
                    #expect(Self.counted(lean.record) == Self.counted(CountedRecord(full.record)), "\(line)")
                }
            }
        }
        // Both sides are exercised: skipped strings with escapes vouched for, counted ones declined.
        #expect(vouchedWithEscapes > 300 && declinedCounted > 300, "\(vouchedWithEscapes) vouched, \(declinedCounted) events declined")
    }
}
