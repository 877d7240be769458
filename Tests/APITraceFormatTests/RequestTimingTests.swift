import APITraceFormat
import Foundation
import Testing

/// The optional connection phases of a `request` (`dns_ms`, `connect_ms`, `tls_ms`, `ttfb_ms`,
/// `protocol`, `reused`): both readers accept and refuse the same lines, naming the field.
@Suite("Request timing fields")
struct RequestTimingTests {
    static let prefix = #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","status":200,"duration_ms":5"#

    /// What the reading layer makes of a line: `nil` when it is an event, else its reason.
    static func scanned(_ line: String) -> String? {
        var scanner = TraceRecordScanner()
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { buffer -> String? in
            switch scanner.scan(UnsafeRawBufferPointer(buffer)) {
            case .event: nil
            case .invalid(let reason): reason
            case .header, .unknownType: "not an event"
            }
        }
    }

    @Test("valid phases are read by both readers", arguments: [
        #","dns_ms":0,"connect_ms":12.5,"tls_ms":8,"ttfb_ms":20,"protocol":"h2","reused":false}"#,
        #","reused":true}"#,
        #","ttfb_ms":8640000000,"protocol":"http/1.1"}"#,
        #","dns_ms":null,"reused":null}"#,
    ])
    func accepted(suffix: String) throws {
        let line = Self.prefix + suffix
        #expect(Self.scanned(line) == nil)
        #expect(throws: Never.self) { try TraceLine.decode(line) }
    }

    @Test("out-of-range or mistyped phases are refused by both readers, naming the field", arguments: [
        (#","dns_ms":-1}"#, "dns_ms"),
        (#","connect_ms":1e300}"#, "connect_ms"),
        (#","tls_ms":"8"}"#, "tls_ms"),
        (#","ttfb_ms":8640000001}"#, "ttfb_ms"),
        (#","protocol":2}"#, "protocol"),
        (#","reused":"yes"}"#, "reused"),
        (#","reused":1}"#, "reused"),
        (#","reused":truth}"#, "reused"),
    ])
    func refused(suffix: String, field: String) {
        let line = Self.prefix + suffix
        let reason = Self.scanned(line)
        #expect(reason?.contains("\"\(field)\"") == true, "reading layer: \(reason ?? "accepted")")
        #expect {
            try TraceLine.decode(line)
        } throws: { error in
            "\(error)".contains("\"\(field)\"")
        }
    }

    @Test("phases a reader would refuse are left out when writing, and the line still reads")
    func writerLeavesOutBadPhases() throws {
        let event = TraceEvent(
            timestamp: TraceTimestamp(millisecondsSince1970: 1_795_341_600_000),
            .request(.init(method: "GET", route: "/a", status: 200, durationMs: 5, timing: .init(
                dnsMs: -3, connectMs: .nan, tlsMs: .infinity, firstByteMs: 4, reusedConnection: false))))
        let line = event.jsonLine
        #expect(!line.contains("dns_ms") && !line.contains("connect_ms") && !line.contains("tls_ms"))
        #expect(Self.scanned(line) == nil)
        guard case .event(let decoded) = try TraceLine.decode(line), case .request(let request) = decoded.payload else {
            Issue.record("not a request: \(line)")
            return
        }
        #expect(request.timing == .init(firstByteMs: 4, reusedConnection: false))
    }

    @Test("a request without measurements has no timing")
    func emptyTimingIsNil() {
        let request = TraceEvent.Request(method: "GET", route: "/a", durationMs: 1, timing: .init())
        #expect(request.timing == nil)
    }
}
