import APITraceAnalysis
import APITraceFormat
import Foundation
import Testing

@Suite("The fast line path accepts and rejects what TraceLine.decode does")
struct RawLineScannerTests {
    static let lines: [String] = [
        #"{"type":"request","ts":"2026-11-22T10:00:00.123Z","method":"GET","route":"/a","status":200,"duration_ms":12.5}"#,
        #" { "type" : "request" , "ts":"2026-11-22T10:00:00Z", "method":"GET","route":"/a\/b","status":503,"duration_ms":1.25e2 } "#,
        #"{"type":"request","ts":"2026-11-22T11:00:00.5+01:00","method":"POST","route":"/r\u00e9","duration_ms":7,"status":null,"error":"URLError.timedOut"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","future":{"a":[1,2,{"b":null}],"c":"}"},"method":"GET","route":"/a","duration_ms":-0.5,"flag":true}"#,
        #"{"ts":"2026-11-22T10:00:00Z","type":"decode_failure","entity":"App","kind":"keyNotFound","path":"data.apps[3].stability","message":"No \"stability\""}"#,
        #"{"type":"error","ts":"2026-11-22T10:00:00Z","identity":"E.x","user_info":{"k":"v"},"underlying":["A","B"],"suppressed":2}"#,
        #"{"type":"sse","ts":"2026-11-22T10:00:00Z","phase":"reconnect","route":"/s","delay_ms":1500}"#,
        #"{"type":"log","ts":"2026-11-22T10:00:00Z","level":"info","message":"hi","metadata":{}}"#,
        #"{"type":"dropped","ts":"2026-11-22T10:00:00Z","count":12,"reason":"buffer_full"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","duration_ms":"fast"}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","duration_ms":1}"#,
        #"{"type":"request","ts":"yesterday","method":"GET","route":"/a","duration_ms":1}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","duration_ms":1.}"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","duration_ms":1} extra"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a","duration_ms":1"#,
        #"{"type":"request","ts":"2026-11-22T10:00:00Z","method":"GET","route":"/a" "duration_ms":1}"#,
        "{\"type\":\"log\",\"ts\":\"2026-11-22T10:00:00Z\",\"level\":\"info\",\"message\":\"tab\tinside\"}",
        #"not json"#,
        #"{}"#,
    ]

    @Test("valid lines count, invalid ones are rejected", arguments: lines)
    func agrees(line: String) {
        var aggregator = TraceAggregator()
        var copy = line
        let outcome = copy.withUTF8 { aggregator.add(line: UnsafeRawBufferPointer($0)) }
        let decoded = Result { try TraceLine.decode(line) }
        switch (decoded, outcome) {
        case (.success(.event), .counted), (.failure, .invalid), (.success(.unknown), .unknownType), (.success(.header), .header):
            break
        default:
            Issue.record("decode: \(decoded), fast path: \(outcome)")
        }
        if case .success(.event(let event)) = decoded {
            var reference = TraceAggregator()
            reference.add(event)
            let a = TraceReport(summary: aggregator.summary()), b = TraceReport(summary: reference.summary())
            #expect(a.totals.events == b.totals.events)
            #expect(a.totals.errors == b.totals.errors)
            #expect(a.routes.map(\.route) == b.routes.map(\.route))
            #expect(a.routes.map(\.latency) == b.routes.map(\.latency))
            #expect(a.firstEvent == b.firstEvent)
            #expect(a.decodeFailures.map(\.path) == b.decodeFailures.map(\.path))
            #expect(a.errors.map(\.occurrences) == b.errors.map(\.occurrences))
        }
    }
}
