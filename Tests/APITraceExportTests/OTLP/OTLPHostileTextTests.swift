import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// Routes and hosts are cut on their bytes: a `?`, `#` or `@` followed by a combining mark is one
/// Swift character that is not `?`, `#` or `@`, and a cut made on characters let the query and the
/// credentials through. Real gzip trace files, every payload of the export (spans, logs, metrics) in
/// both encodings.
@Suite("OTLP export: hostile routes and hosts")
struct OTLPHostileTextTests {
    static let secrets = ["hunter2", "t0k", "fr4g"]
    static let request = TraceEvent.Request(
        method: "GET", route: "/p/{id}?\u{301}access_token=t0k", host: "bob:hunter2@\u{301}api.example.com", status: 503, durationMs: 3, port: 8443)
    static let other = TraceEvent.Request(method: "GET", route: "/q#\u{301}fr4g", host: "h", status: 200, durationMs: 3)

    @Test("the mapped span keeps neither the query nor the user information")
    func mapped() throws {
        for request in [Self.request, Self.other] {
            guard case .span(let span) = OTLPMapping.map(TraceEvent(.request(request))) else { Issue.record("not a span"); return }
            let texts = [span.name, span.statusMessage] + span.attributes.map { "\($0.value)" }
            for secret in Self.secrets { #expect(!texts.contains { $0.contains(secret) }, "\(secret) in \(texts)") }
        }
    }

    @Test("no payload carries them, protobuf or JSON, metrics included", arguments: [OTLPEndpoint.Encoding.protobuf, .json])
    func exported(encoding: OTLPEndpoint.Encoding) throws {
        let dir = TemporaryDirectory()
        let path = dir.file("hostile.jsonl.gz")
        let events = [Self.request, Self.other].map { TraceEvent(timestamp: TraceFiles.day, .request($0)) }
        try Data(TraceFiles.make(producer: "p", events: events)).write(to: URL(fileURLWithPath: path))
        var payloads: [[UInt8]] = []
        let export = OTLPExport(encoding: encoding) { _, payload in
            payloads.append(payload)
            return .sent(attempts: 1, bytesOnWire: payload.count)
        }
        var state = CumulativeExport(selection: "test")
        let outcome = export.run(TraceExportReader(), [path], state: &state)
        #expect(outcome.failure == nil && outcome.spans == 2)
        #expect(payloads.count == 2, "spans and metrics")
        for payload in payloads {
            for secret in Self.secrets { #expect(!payload.windows(ofCount: secret.utf8.count).contains { $0.elementsEqual(secret.utf8) }, "\(secret)") }
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func windows(ofCount n: Int) -> [ArraySlice<UInt8>] {
        count < n ? [] : (0...(count - n)).map { self[$0..<($0 + n)] }
    }
}
