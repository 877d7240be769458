import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The mapping's decisions that the end-to-end checker does not reach on its own.
@Suite("OTLP mapping")
struct OTLPMappingTests {
    func span(_ request: TraceEvent.Request, traceID: String? = nil, spanID: String? = nil) throws -> OTLPSpan {
        let event = TraceEvent(timestamp: TraceTimestamp(millisecondsSince1970: 1_795_334_400_000), traceID: traceID, spanID: spanID, .request(request))
        guard case .span(let span) = OTLPMapping.map(event) else { throw TimedOut(description: "a request must map to a span") }
        return span
    }

    func attribute(_ span: OTLPSpan, _ key: String) -> OTLPAttribute.Value? { span.attributes.first { $0.key == key }?.value }

    @Test("span status: Error for 4xx, 5xx and transport failures; unset for successes, cancels and offline requests",
          arguments: [
            (200, nil, OTLPSpan.StatusCode.unset), (404, nil, .error), (503, nil, .error), (nil, "URLError.timedOut", .error),
            (nil, "URLError.cancelled", .unset), (nil, "CancellationError", .unset), (nil, "URLError.notConnectedToInternet", .unset),
          ] as [(Int?, String?, OTLPSpan.StatusCode)])
    func status(status: Int?, error: String?, expected: OTLPSpan.StatusCode) throws {
        let s = try span(.init(method: "GET", route: "/a", host: "h", status: status, durationMs: 5, error: error))
        #expect(s.status == expected)
        #expect(attribute(s, "error.type") == (error.map { .string($0) } ?? status.flatMap { $0 >= 400 ? .string(String($0)) : nil }))
    }

    @Test("url.full never carries user information, a query or a fragment, whatever the file holds")
    func noCredentials() throws {
        let s = try span(.init(method: "GET", route: "/p/{id}?access_token=t0k#frag", host: "bob:hunter2@api.example.com", status: 200, durationMs: 1, port: 8443))
        #expect(attribute(s, "url.full") == .string("https://api.example.com:8443/p/{id}"))
        #expect(attribute(s, "server.address") == .string("api.example.com"))
        #expect(s.name == "GET /p/{id}")
        for a in s.attributes { #expect(!"\(a.value)".contains("hunter2") && !"\(a.value)".contains("t0k")) }
    }

    @Test("ids: the event's own when valid W3C ids; otherwise derived from the event, the same on every export")
    func ids() throws {
        let request = TraceEvent.Request(method: "GET", route: "/a", host: "h", status: 200, durationMs: 12.5)
        let own = try span(request, traceID: "4bf92f3577b34da6a3ce929d0e0e4736", spanID: "00f067aa0ba902b7")
        #expect(own.traceID == [0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36])
        #expect(own.spanID == [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
        // Upper case reads as lower case; the bytes either side of each range of digits are no digits.
        #expect(try span(request, traceID: "4BF92F3577B34DA6A3CE929D0E0E4736", spanID: "00F067AA0BA902B7") == own)
        for neighbour in ["/", ":", "@", "G", "`", "g"] {
            #expect(try span(request, traceID: "4bf92f3577b34da6a3ce929d0e0e473" + neighbour, spanID: "00f067aa0ba902b7").traceID != own.traceID)
        }
        for bad in ["00000000000000000000000000000000", "xyz", "4bf92f3577b34da6a3ce929d0e0e473g"] {
            let derived = try span(request, traceID: bad, spanID: "0000000000000000")
            #expect(derived.traceID.count == 16 && derived.traceID.contains { $0 != 0 })
            #expect(derived.spanID.count == 8 && derived.spanID.contains { $0 != 0 })
            #expect(try span(request, traceID: bad, spanID: "0000000000000000") == derived)
        }
        #expect(try span(request).spanID != span(.init(method: "GET", route: "/b", host: "h", status: 200, durationMs: 12.5)).spanID)
    }

    @Test("timing phases become span events within the span; the ALPN name becomes network.protocol.version")
    func timing() throws {
        let timing = TraceEvent.Request.Timing(dnsMs: 2, connectMs: 10, tlsMs: 6, firstByteMs: 30, networkProtocol: "h2", reusedConnection: false)
        let s = try span(.init(method: "POST", route: "/a", host: "h", status: 201, durationMs: 50, attempt: 3, timing: timing))
        #expect(s.events.map(\.name) == ["http.dns", "http.connect", "http.tls", "http.first_byte"])
        #expect(s.events.allSatisfy { $0.timeUnixNano >= s.startTimeUnixNano && $0.timeUnixNano <= s.endTimeUnixNano })
        #expect(s.events.last?.timeUnixNano == s.startTimeUnixNano + 30_000_000)
        #expect(s.endTimeUnixNano - s.startTimeUnixNano == 50_000_000)
        #expect(attribute(s, "network.protocol.version") == .string("2"))
        #expect(attribute(s, "http.request.resend_count") == .int(2))
    }

    @Test("log records carry the trace and span ids of their event, and none when the event has no trace")
    func logIDs() throws {
        let failure = TraceEvent(traceID: "4bf92f3577b34da6a3ce929d0e0e4736", spanID: "00f067aa0ba902b7",
                                 .decodeFailure(.init(route: "/a", entity: "App", kind: .typeMismatch, path: "data.x", key: "x", message: "")))
        guard case .log(let record) = OTLPMapping.map(failure) else { Issue.record("not a log record"); return }
        #expect(record.traceID.count == 16 && record.spanID.count == 8)
        #expect(record.eventName == "apitrace.decode_failure")
        let orphan = TraceEvent(spanID: "00f067aa0ba902b7", .log(.init(level: "error", message: "m")))
        guard case .log(let lone) = OTLPMapping.map(orphan) else { Issue.record("not a log record"); return }
        #expect(lone.traceID.isEmpty && lone.spanID.isEmpty, "a span id without its trace id means nothing")
        #expect(lone.severityNumber == 17)
    }

    @Test("the protobuf encoding decodes with the official classes, edge values included (false, negative, empty, non-ASCII)")
    func protobufEdgeValues() async throws {
        var batch = OTLPBatch()
        var s = try span(.init(method: "GET", route: "/é/{id}", host: "h", status: 200, durationMs: 1))
        s.attributes += [OTLPAttribute("b", .bool(false)), OTLPAttribute("n", .int(-5)), OTLPAttribute("d", .double(0)), OTLPAttribute("e", .string(""))]
        batch.add(.span(s), resource: OTLPResource(serviceName: "svc"))
        let bytes = OTLPProtobufEncoding.traces(batch)
        let script = """
            import sys, json
            from google.protobuf import json_format
            from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as ts
            m = ts.ExportTraceServiceRequest(); m.ParseFromString(sys.stdin.buffer.read())
            span = m.resource_spans[0].scope_spans[0].spans[0]
            values = {a.key: (a.value.WhichOneof("value"), str(getattr(a.value, a.value.WhichOneof("value")))) for a in span.attributes}
            print(json.dumps({"name": span.name, "kind": span.kind, "values": values, "service": m.resource_spans[0].resource.attributes[0].value.string_value}))
            """
        let out = try await runOffPool("/usr/bin/env", ["python3", "-c", script], stdin: Data(bytes))
        #expect(out.status == 0, "\(String(decoding: out.stderr, as: UTF8.self))")
        let decoded = try JSONSerialization.jsonObject(with: out.stdout) as? [String: Any]
        #expect(decoded?["name"] as? String == "GET /é/{id}")
        #expect(decoded?["kind"] as? Int == 3)
        #expect(decoded?["service"] as? String == "svc")
        let values = decoded?["values"] as? [String: [String]]
        #expect(values?["b"] == ["bool_value", "False"])
        #expect(values?["n"] == ["int_value", "-5"])
        #expect(values?["d"] == ["double_value", "0.0"])
        #expect(values?["e"] == ["string_value", ""])
        #expect(values?["http.response.status_code"] == ["int_value", "200"])
    }
}
