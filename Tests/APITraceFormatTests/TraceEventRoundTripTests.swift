import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

@Suite("Trace event encoding")
struct TraceEventRoundTripTests {
    @Test("every event type survives encode then decode", arguments: everyEventType)
    func roundTrip(_ event: TraceEvent) throws {
        let decoded = try TraceLine.decode(event.jsonLine)
        #expect(decoded == .event(event))
    }

    @Test("every line is valid JSON that Foundation reads with the documented field names", arguments: everyEventType)
    func foundationReadsIt(_ event: TraceEvent) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.jsonLine.utf8)) as? [String: Any])
        #expect(object["type"] as? String == event.type)
        #expect(object["ts"] as? String == "2026-11-22T10:00:00.123Z")
        if case .request(let r) = event.payload {
            #expect(object["route"] as? String == r.route)
            #expect((object["duration_ms"] as? NSNumber)?.doubleValue == r.durationMs)
            #expect(object["status"] == nil || (object["status"] as? Int) == r.status)
        }
        if case .error(let e) = event.payload {
            #expect(object["user_info"] as? [String: String] == e.userInfo)
            #expect(object["message"] as? String == e.message)
        }
    }

    @Test("the header round-trips and names the format")
    func header() throws {
        let header = TraceFileHeader(producer: "ab12cd34", app: "Otec", appVersion: "2.1", host: "phone", started: .init(millisecondsSince1970: 0))
        #expect(header.jsonLine == #"{"type":"header","format":"apitrace","version":1,"producer":"ab12cd34","app":"Otec","app_version":"2.1","host":"phone","started":"1970-01-01T00:00:00.000Z"}"#)
        #expect(try TraceLine.decode(header.jsonLine) == .header(header))
    }

    @Test("unknown fields are skipped and unknown types reported as unknown")
    func forwardCompatible() throws {
        let line = #"{"type":"request","ts":"2026-11-22T10:00:00Z","future":{"a":[1,2,{"b":null}]},"method":"GET","route":"/a","duration_ms":1e1,"status":null}"#
        guard case .event(let event) = try TraceLine.decode(line), case .request(let r) = event.payload else {
            Issue.record("not a request"); return
        }
        #expect(r.durationMs == 10)
        #expect(r.status == nil)
        #expect(try TraceLine.decode(#"{"type":"span","ts":"2026-11-22T10:00:00Z"}"#) == .unknown(type: "span"))
    }

    @Test("bad lines name the field at fault", arguments: [
        (#"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","duration_ms":"fast"}"#, "duration_ms"),
        (#"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","duration_ms":1}"#, "route"),
        (#"{"type":"log","ts":"yesterday","level":"info","message":"x"}"#, "ts"),
        (#"{"ts":"2026-11-22T10:00:00Z"}"#, "type"),
    ])
    func invalid(line: String, field: String) {
        #expect {
            try TraceLine.decode(line)
        } throws: { error in
            "\(error)".contains("\"\(field)\"")
        }
    }

    @Test("malformed JSON throws instead of crashing", arguments: [
        "", "{", "{\"type\"", "{\"type\":\"log\",}", "[1]", "{\"a\":\"\\u12\"}", "{\"type\":\"log\"} x", "{\"a\":tru}",
        // Words that start like `true` and `false` are not booleans.
        #"{"type":"log","ts":"2026-11-22T10:00:00Z","level":"info","message":"x","a":txyz}"#,
        #"{"type":"log","ts":"2026-11-22T10:00:00Z","level":"info","message":"x","a":fals3}"#,
    ])
    func malformed(line: String) {
        #expect(throws: (any Error).self) { try TraceLine.decode(line) }
    }
}

@Suite("Timestamps")
struct TraceTimestampTests {
    @Test("instants outside 1970-9999, impossible days and offsets beyond 23:59 are rejected", arguments: [
        "1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00+00:01", "2026-02-30T10:00:00Z",
        "2026-11-22T10:00:00+24:00", "2026-11-22T10:00:00-99:99", "2026-11-22T10:00:00+05:60",
        "9999-12-31T23:59:59-23:59", "0000-01-01T00:00:00+00:01",
    ])
    func rejectsInsaneInstants(text: String) {
        #expect(TraceTimestamp(rfc3339: text) == nil)
    }

    @Test("the edges of the sane range are accepted")
    func acceptsEdges() {
        #expect(TraceTimestamp(rfc3339: "1970-01-01T00:00:00Z")?.millisecondsSince1970 == 0)
        #expect(TraceTimestamp(rfc3339: "9999-12-31T23:59:59.999Z") != nil)
        #expect(TraceTimestamp(rfc3339: "2024-02-29T10:00:00+23:59") != nil)
    }

    @Test("RFC 3339 text agrees with Foundation's formatter over many instants")
    func agreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let ms = Int64.random(in: 0...4_000_000_000_000, using: &generator)
            let t = TraceTimestamp(millisecondsSince1970: ms)
            #expect(t.rfc3339 == formatter.string(from: t.date))
            #expect(TraceTimestamp(rfc3339: t.rfc3339) == t)
        }
    }

    @Test("offsets and fractions parse", arguments: [
        ("2026-11-22T11:00:00.5+01:00", Int64(1_795_341_600_500)),
        ("2026-11-22T10:00:00Z", 1_795_341_600_000),
        ("2026-11-22T10:00:00.123456Z", 1_795_341_600_123),
        ("2026-11-22T04:30:00-05:30", 1_795_341_600_000),
    ])
    func parses(text: String, ms: Int64) {
        #expect(TraceTimestamp(rfc3339: text)?.millisecondsSince1970 == ms)
    }

    @Test("garbage does not parse", arguments: ["", "2026-11-22", "2026-13-01T00:00:00Z", "2026-11-22T10:00:00", "2026-11-22T10:00:00.Z", "2026-11-22T10:00:00Zjunk"])
    func rejects(text: String) {
        #expect(TraceTimestamp(rfc3339: text) == nil)
    }
}
