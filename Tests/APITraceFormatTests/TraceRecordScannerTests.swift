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
