import APITraceFormat
import Foundation
import Testing

/// The one line decoder: JSON as RFC 8259 defines it, escapes in keys and values decoded, bad text
/// refused with one message whichever entry point reads the line, repeated keys resolved last-wins.
@Suite("One line decoder")
struct TraceRecordScannerTests {
    static let plain = #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","status":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1"}"#

    /// Each member of `plain` written another way that means the same text.
    static let sameMeaning: [String] = [
        #"{"t\u0079pe":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","status":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1"}"#,
        #"{"type":"req\u0075est","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","status":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1"}"#,
        #"{"type":"request","\u0074s":"2026-11-22T10:00:01\u002e000Z","method":"GET","route":"/apps/{id}","status":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","m\u0065thod":"\u0047ET","route":"\/apps\/{id}","status":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","st\u0061tus":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","status":503,"\u0064uration_ms":1.25e1,"\u0065rror":"HTTP\u0020503","session":"s\u002d1"}"#,
        #" { "type" : "request" , "ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","status":200,"status":503,"duration_ms":12.5,"error":"HTTP 503","session":"s-1","extra":{"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"}} "#,
    ]

    @Test("escapes in keys and values mean the plain text, to TraceLine and to the records every command reads", arguments: sameMeaning)
    func escapes(_ line: String) throws {
        let want = try TraceLine.decode(Self.plain)
        #expect(try TraceLine.decode(line) == want)
        guard case .event(let event) = want, case .request(let r) = event.payload else { Issue.record("not a request"); return }
        #expect(r.status == 503 && r.route == "/apps/{id}" && r.error == "HTTP 503")
    }

    /// Lines that are not JSON, each with the field or column its message must name.
    static let notJSON: [(String, String)] = [
        (#"{"type":"request","route":"/a\x"}"#, "route"),
        (#"{"type":"request","route":"/a\u12"}"#, "route"),
        (#"{"type":"request","route":"/a\ud800"}"#, "route"),
        (#"{"type":"request","route":"/a\udc00\u0041"}"#, "route"),
        (#"{"type":"request","route":"/a\ud800\ud800"}"#, "route"),
        ("{\"type\":\"request\",\"route\":\"/a\u{01}\"}", "route"),
        (#"{"type":"request","unused":"\q"}"#, "column"),
        (#"{"ty\pe":"request"}"#, "column"),
        (#"{"type":"request","unused":[1,,2]}"#, "column"),
        (#"{"type":"request","unused":{"a":1]}"#, "column"),
        (#"{"type":"request","status":05}"#, "status"),
        (#"{"type":"request","unused":-}"#, "column"),
        (#"{"type":"request","unused":NaN}"#, "column"),
        (#"{"type":"request"} x"#, "text after"),
    ]

    @Test("a line that is not JSON is refused with the same message by every entry point", arguments: notJSON.indices)
    func refused(_ index: Int) throws {
        let (line, names) = Self.notJSON[index]
        let invalid = try #require(throws: TraceLine.Invalid.self) { try TraceLine.decode(line) }
        #expect(!invalid.isJSONObject, "\(line)")
        #expect(invalid.reason.contains(names), "\(invalid.reason)")
        // The bytes are refused by the records too (what report, alert, export, cat and the collector read).
        let reference = try? JSONSerialization.jsonObject(with: Data(line.utf8))
        #expect(reference == nil || line.contains("\\ud8") || line.contains("\\udc"), "Foundation reads \(line)")
    }

    @Test("invalid UTF-8 in any string is refused; valid multi-byte text is read as it is")
    func utf8() throws {
        let good = Data(#"{"type":"log","ts":"2026-11-22T10:00:01.000Z","level":"info","message":"h€llo 😀 é"}"#.utf8)
        let decoded = try good.withUnsafeBytes { try TraceLine.decode($0) }
        guard case .event(let e) = decoded, case .log(let log) = e.payload else { Issue.record("not a log"); return }
        #expect(log.message == "h€llo 😀 é")
        for bad: [UInt8] in [[0xFF], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            var line = Array(#"{"type":"log","ts":"2026-11-22T10:00:01.000Z","level":"info","message":"a"#.utf8)
            line += bad + Array(#"b"}"#.utf8)
            let error = try #require(throws: TraceLine.Invalid.self) { try line.withUnsafeBytes { try TraceLine.decode($0) } }
            #expect(error.reason.contains("UTF-8") && !error.isJSONObject, "\(bad): \(error)")
        }
    }

    @Test("a repeated key keeps its last value, null included")
    func lastWins() throws {
        let cleared = #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/a","status":503,"duration_ms":1,"status":null}"#
        guard case .event(let e) = try TraceLine.decode(cleared), case .request(let r) = e.payload else { Issue.record("not a request"); return }
        #expect(r.status == nil)
        let missing = #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/a","duration_ms":1,"route":null}"#
        #expect(throws: TraceLine.Invalid(reason: "missing field \"route\"")) { try TraceLine.decode(missing) }
    }

    @Test("deep nesting in an unused field is refused past 512 levels without using the stack")
    func nesting() throws {
        func line(_ depth: Int) -> String {
            #"{"type":"log","ts":"2026-11-22T10:00:01.000Z","level":"info","x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        }
        _ = try TraceLine.decode(line(512))
        let deep = try #require(throws: TraceLine.Invalid.self) { try TraceLine.decode(line(200_000)) }
        #expect(deep.reason.contains("nested deeper than 512"))
        let unclosed = #"{"type":"log","x":"# + String(repeating: "{\"a\":[", count: 100_000)
        #expect(throws: TraceLine.Invalid.self) { try TraceLine.decode(unclosed) }
    }

    /// Mutations of a real line over bytes that matter to JSON; Foundation's `JSONSerialization` is
    /// the reference for whether the result is a JSON object at all (the fuzz target `line-decoder`
    /// does the same at scale). Left out: lone surrogates (Foundation may read them as U+FFFD) and
    /// trailing commas (Foundation reads `[1,]`), both refused by RFC 8259, `jq` and Python.
    @Test("mutated lines: the decoder calls a line a JSON object exactly when Foundation does")
    func differential() throws {
        let alphabet: [[UInt8]] = ["\\", "\"", "u", "0", "9", "d800", "D", "{", "}", "[", "]", ",", ":", " ", "-", ".", "e", "n", "t", "\\u00e9", "\\u", "05"].map { Array($0.utf8) }
            + [[0x01], [0x1F], [0x7F], [0xC3, 0xA9], [0xC3], [0xFF], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xED, 0xA0, 0x80]]
        var rng = UInt64(20261125)
        func next(_ n: Int) -> Int { rng = rng &* 6364136223846793005 &+ 1442695040888963407; return Int(rng >> 33) % n }
        let seed = Array(#"{"type":"request","ts":"2026-11-22T10:00:01.000Z","method":"GET","route":"/apps/{id}","status":503,"duration_ms":12.5,"extra":{"a":[1,{"b":null}],"c":"\u00e9 x","d":-0.5e3}}"#.utf8)
        var compared = 0, objects = 0
        for _ in 0..<4000 {
            var line = seed
            for _ in 0..<(1 + next(3)) {
                let at = next(line.count + 1)
                let piece = alphabet[next(alphabet.count)]
                switch next(3) {
                case 0: line.insert(contentsOf: piece, at: at)
                case 1 where at < line.count: line.replaceSubrange(at..<min(line.count, at + piece.count), with: piece)
                default: if at < line.count { line.remove(at: at) }
                }
            }
            let text = String(decoding: line, as: UTF8.self).lowercased()
            if text.contains("\\ud8") || text.contains("\\ud9") || text.contains("\\uda") || text.contains("\\udb") || text.contains("\\udc") || text.contains("\\udd") || text.contains("\\ude") || text.contains("\\udf") { continue }
            // Foundation also takes a trailing comma before `}` or `]`, which RFC 8259 (and jq and Python) refuse.
            if hasTrailingComma(line) { continue }
            let reference = (try? JSONSerialization.jsonObject(with: Data(line))) is [String: Any]
            let ours: Bool
            do { _ = try line.withUnsafeBytes { try TraceLine.decode($0) }; ours = true } catch { ours = (error as? TraceLine.Invalid)?.isJSONObject ?? false }
            #expect(ours == reference, "\(String(decoding: line, as: UTF8.self)) reference: \(reference)")
            compared += 1
            if reference { objects += 1 }
        }
        #expect(compared > 3000 && objects > 300 && compared - objects > 300, "\(compared) compared, \(objects) objects")
    }

    /// Every field of a record, texts as their text (a record's texts point into its line).
    static func fields(_ r: TraceRecord) -> [String] {
        Mirror(reflecting: r).children.map { child in
            let value = (child.value as? RawText?).map { $0.map { "\"" + $0.string + "\"" } ?? "nil" } ?? "\(child.value)"
            return "\(child.label ?? "?")=\(value)"
        }
    }

    /// Lines whose keys change order from line to line: an optional field left out, orders of other
    /// event types, keys repeated (`null` last), keys that begin one another, unknown keys (short,
    /// and past the sixteen bytes a key is compared by), escaped keys, whitespace, an empty key,
    /// a key cut off, a header, and invalid values under expected keys.
    static let reordered: [String] = [
        #"{"type":"request","ts":"2026-11-22T10:00:01.000Z","session":"s-1","trace_id":"fdd3c801e8400dfe3f5ed68af966fe48","method":"GET","route":"/a","host":"api.example.com","status":200,"duration_ms":68.078,"bytes_in":46986,"attempt":1}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:02.000Z","session":"s-1","method":"POST","route":"/b","host":"api.example.com","status":503,"duration_ms":1.5,"bytes_in":1,"bytes_out":2,"attempt":2}"#,
        #"{"type":"log","ts":"2026-11-22T10:00:03.000Z","session":"s-1","level":"info","message":"m","metadata":{"screen":"news"},"source":"App"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:04.000Z","method":"GET","route":"/a","duration_ms":3,"status":200,"status":null}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:05.000Z","method":"GET","route":"/a","duration_ms":3,"status":500,"status":404,"route":"/c"}"#,
        #"{"type":"websocket","ts":"2026-11-22T10:00:06.000Z","phase":"close","route":"/live","messages_in":4,"message":"x","messages_out":2,"code":1006}"#,
        #"{"type":"websocket","ts":"2026-11-22T10:00:06.000Z","phase":"close","route":"/live","message":"x","messages_in":4,"messages_i":3,"count":5}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:07.000Z","extra":1,"method":"GET","a_key_longer_than_sixteen":{"x":[1]},"route":"/a","duration_ms":3,"x":null}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:08.000Z","method":"GET","route":"/a","st\u0061tus":418,"duration_ms":3,"\u0073tatus":419}"#,
        #" { "type" : "request" , "ts":"2026-11-22T10:00:09.000Z" ,"method":"GET", "route":"/a","duration_ms" :3,"status":201 } "#,
        #"{"type":"request","ts":"2026-11-22T10:00:10.000Z","":"empty","method":"GET","route":"/a","duration_ms":3}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:11.000Z","method":"GET","route":"/a","duration_ms":3,"status"#,
        #"{"type":"request","ts":"2026-11-22T10:00:12.000Z","method":"GET","route":"/a","duration_ms":3,"status":"200"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:13.000Z","method":"GET","route":"/a","duration_ms":-1}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:14.000Z","method":"GET","route":"/a","duration_msx":3}"#,
        #"{"type":"header","format":"apitrace","version":1,"producer":"p","app":"A","app_version":"2.3.0","host":"device-0","started":"2026-11-22T08:00:00.000Z"}"#,
        #"{"ts":"2026-11-22T10:00:15.000Z","type":"error","identity":"E1","suppressed":2,"underlying":["a","b"],"user_info":{"k":"v"},"line":-3}"#,
        #"{"type":"sse","ts":"2026-11-22T10:00:16.000Z","phase":"open","route":"/s","attempt":1,"last_event_id":"7","delay_ms":5}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:17.000Z","method":"GET","route":"/a","duration_ms":3,"port":0}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:18.000Z","method":"GET","route":"/a","duration_ms":3}x"#,
        // Values past the plain forms: numbers with fractions, exponents, leading zeros, whitespace,
        // more digits than a plain integer takes; strings with escapes and UTF-8.
        #"{"type":"request","ts":"2026-11-22T10:00:19.000Z","method":"GET","route":"/a\"b\u00e9","duration_ms":3,"status":200.9,"attempt":-0,"bytes_in":2e3}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:20.000Z","method":"GÉT","route":"/é","duration_ms":3,"status": 404,"bytes_in":123456789012345678,"bytes_out":1234567890123456789}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:21.000Z","method":"GET","route":"/a","duration_ms":3,"status":0200}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:22.000Z","method":"GET","route":"/a","duration_ms":3,"bytes_in":12345678901234567890}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:23.000Z","method":"GET","route":"/a","duration_ms":3,"status":-"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:24.000Z","method":"GET","route":"/a","duration_ms":3,"status":200,"route":"/a"#,
    ]

    @Test("one scanner across lines whose keys change order reads each line as a scanner new to it does")
    func expectedKeysFollowingAField() {
        var rng = UInt64(20261129)
        func next(_ n: Int) -> Int { rng = rng &* 6364136223846793005 &+ 1442695040888963407; return Int(rng >> 33) % n }
        var shared = TraceRecordScanner()
        var results: Set<String> = []
        for round in 0..<400 {
            // Runs of one line (the expected keys settle), then lines in random order.
            let line = Self.reordered[round < 60 ? round / 3 % Self.reordered.count : next(Self.reordered.count)]
            Array(line.utf8).withUnsafeBytes { bytes in
                var fresh = TraceRecordScanner()
                let want = fresh.scan(bytes)
                let got = shared.scan(bytes)
                #expect(got == want, "\(line)")
                results.insert("\(want)")
                if want == .event || want == .header {
                    #expect(Self.fields(shared.record) == Self.fields(fresh.record), "\(line)")
                }
            }
        }
        #expect(results.count >= 5, "\(results)")
    }

    /// A `,` followed, after whitespace, by `}` or `]`.
    private func hasTrailingComma(_ b: [UInt8]) -> Bool {
        for (i, c) in b.enumerated() where c == UInt8(ascii: ",") {
            var j = i + 1
            while j < b.count, b[j] == 0x20 || b[j] == 0x09 || b[j] == 0x0A || b[j] == 0x0D { j += 1 }
            if j < b.count, b[j] == UInt8(ascii: "}") || b[j] == UInt8(ascii: "]") { return true }
        }
        return false
    }
}
