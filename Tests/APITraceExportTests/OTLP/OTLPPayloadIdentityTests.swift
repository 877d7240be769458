import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The export encodes straight from scanned lines (no events, no attribute arrays): its requests
/// must be byte for byte those the export made from mapped values before it did. The digests were
/// taken from `apitrace export --format otlp --batch-size 97` as built before the change (commit
/// a48f098), on `Samples/Traces` and a file of edge cases (escapes, invalid ids, hosts with user
/// information, queries in routes, every event type and phase, user_info and metadata objects,
/// invalid lines); each request body un-gzipped, FNV-1a 64 of it, listed sorted as
/// `signal digest size`, and the FNV-1a 64 of that list. Two reading threads, as there: each
/// thread's batches are then the same whatever the interleaving.
@Suite("OTLP export: payload bytes")
struct OTLPPayloadIdentityTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let paths = [root.appendingPathComponent("Samples/Traces").path, root.appendingPathComponent("Tests/Fixtures/OTLP/otlp-edge-cases.jsonl").path]

    static func fnv(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return h
    }

    static func hex(_ h: UInt64) -> String {
        let text = String(h, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    @Test("the same requests as before, to the byte, whether events are filtered on their lines or as events",
          arguments: [
            (OTLPEndpoint.Encoding.protobuf, false, "70ddcc9c2b5d89e0", 4_299_164),
            (.protobuf, true, "70ddcc9c2b5d89e0", 4_299_164),
            (.json, false, "487667d667cc6d51", 9_121_379),
            (.json, true, "487667d667cc6d51", 9_121_379),
          ] as [(OTLPEndpoint.Encoding, Bool, String, Int)])
    func sameBytes(encoding: OTLPEndpoint.Encoding, filtered: Bool, digest: String, bytes: Int) throws {
        let lines = Locked<[String]>([])
        var export = OTLPExport(encoding: encoding, batchSize: 97) { signal, payload in
            lines.withLock { $0.append("\(signal.rawValue) \(Self.hex(Self.fnv(payload))) \(payload.count)") }
            return .sent(attempts: 1, bytesOnWire: payload.count)
        }
        export.readingThreads = 2
        export.sendsMetrics = false
        var state = CumulativeExport(selection: "test")
        // A filter that keeps everything still makes each event, the path of `--session` and the time options.
        let reader = filtered ? TraceExportReader(keepEvent: { _ in true }) : TraceExportReader()
        let outcome = export.run(reader, Self.paths, state: &state)
        #expect(outcome.failure == nil)
        #expect(outcome.spans == 10_840 && outcome.logs == 1_209)
        let list = lines.withLock { $0 }.sorted()
        #expect(list.count == 249)
        #expect(list.reduce(0) { $0 + Int($1.split(separator: " ")[2])! } == bytes)
        let text = list.map { $0 + "\n" }.joined()
        #expect(Self.hex(Self.fnv(text.utf8)) == digest)
    }

    @Test("a payload gzipped on the reading threads is the one the sender would have gzipped")
    func preparedBodies() throws {
        let sender = OTLPSender(endpoint: OTLPEndpoint(base: URL(string: "http://127.0.0.1:9")!))
        var plain: [[UInt8]] = []
        var export = OTLPExport(batchSize: 500) { _, payload in
            plain.append(payload)
            return .sent(attempts: 1, bytesOnWire: payload.count)
        }
        export.sendsMetrics = false
        export.readingThreads = 1
        var state = CumulativeExport(selection: "test")
        _ = export.run(TraceExportReader(), Self.paths, state: &state)
        var bodies: [[UInt8]] = []
        var prepared = OTLPExport(batchSize: 500) { _, body in
            bodies.append(body)
            return .sent(attempts: 1, bytesOnWire: body.count)
        }
        prepared.sendsMetrics = false
        prepared.readingThreads = 1
        prepared.prepare = { try sender.body($0) }
        var state2 = CumulativeExport(selection: "test")
        _ = prepared.run(TraceExportReader(), Self.paths, state: &state2)
        #expect(bodies.count == plain.count && !bodies.isEmpty)
        for (body, payload) in zip(bodies, plain) {
            #expect(body.starts(with: [0x1f, 0x8b]), "gzip")
            var inflated: [UInt8] = []
            try body.withUnsafeBytes { try GzipInflater().inflate($0) { inflated.append(contentsOf: $0) } }
            #expect(inflated == payload)
        }
    }
}
