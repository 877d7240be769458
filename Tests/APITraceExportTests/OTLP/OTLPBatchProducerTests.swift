import APITraceExport
import APITraceFormat
import APITraceTestSupport
import Foundation
import Testing

/// The export's reading threads run ahead of the sending by a bounded number of batches, and the
/// batches of each file are delivered in order whatever the interleaving of files; on real gzip
/// trace files, with `deliver` standing in for the network (no receiver is needed to observe the
/// hand-over itself; the real receiver is in `OTLPExportTests`).
@Suite("OTLP export: parallel reading")
struct OTLPBatchProducerTests {
    /// Four files of 2,000 requests each, every request's route naming its file and position.
    static func files(in dir: TemporaryDirectory) throws -> [String] {
        try (0..<4).map { f in
            let events = (0..<2000).map { i in
                TraceEvent(timestamp: TraceFiles.day.adding(milliseconds: Int64(i)), .request(.init(method: "GET", route: "/f\(f)/\(i)", status: 200, durationMs: 1)))
            }
            let path = dir.file("\(f).jsonl.gz")
            try Data(TraceFiles.make(producer: "p\(f)", events: events)).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    @Test("a receiver that stops answering stops the reading a few batches later, not at the end of the files")
    func readingIsBoundedAhead() throws {
        let dir = TemporaryDirectory()
        let paths = try Self.files(in: dir)
        let read = Locked(0)
        var export = OTLPExport(batchSize: 10) { _, _ in
            // The first request takes long and fails: the readers fill the queue meanwhile.
            Thread.sleep(forTimeInterval: 1)
            return .failed(attempts: 1, reason: "down")
        }
        export.readingThreads = 2
        var state = CumulativeExport(selection: "test")
        let reader = TraceExportReader(keepEvent: { _ in read.withLock { $0 += 1 }; return true })
        let outcome = export.run(reader, paths, state: &state)
        #expect(outcome.failure == "down")
        #expect(outcome.spans == 0)
        // Queue of 2 per reader (4), one batch being handed over per reader (2), one being filled per
        // reader (2), the one sent: at most 9 batches of 10 events read, of 8,000.
        #expect(read.withLock { $0 } <= 90, "the reading ran \(read.withLock { $0 }) events ahead")
        #expect(paths.allSatisfy { state.countedEvents(in: $0) == 0 })
    }

    @Test("with a sending lane per reader, a refusal stops every lane and the reading a few batches later")
    func lanesStopTogether() throws {
        let dir = TemporaryDirectory()
        let paths = try Self.files(in: dir)
        let read = Locked(0)
        let delivered = Locked(0)
        var export = OTLPExport(batchSize: 10) { _, _ in
            delivered.withLock { $0 += 1 }
            Thread.sleep(forTimeInterval: 1)
            return .failed(attempts: 1, reason: "down")
        }
        export.readingThreads = 2
        export.sendingLanes = 2
        var state = CumulativeExport(selection: "test")
        let reader = TraceExportReader(keepEvent: { _ in read.withLock { $0 += 1 }; return true })
        let outcome = export.run(reader, paths, state: &state)
        #expect(outcome.failure == "down")
        #expect(outcome.spans == 0)
        // At most one request in flight per lane, none started after the refusal.
        #expect(delivered.withLock { $0 } <= 2)
        // Per lane: a queue of 2, one being handed over, one being filled, the one sent: 10 batches of 10.
        #expect(read.withLock { $0 } <= 100, "the reading ran \(read.withLock { $0 }) events ahead")
        #expect(paths.allSatisfy { state.countedEvents(in: $0) == 0 })
    }

    @Test("one batch holding two files of different app versions counts each file's events under its own version, as adding them one by one does")
    func metricsPerAppVersion() throws {
        let dir = TemporaryDirectory()
        var expected = OpenMetricsExporter()
        var paths: [String] = []
        for (f, version) in ["1.0", "2.0"].enumerated() {
            // Durations and weights exact in binary: any order of addition gives the same sums.
            let statuses = [200, 404, 503]
            let durations: [Double] = [125, 250, 4000]
            let events = (0..<300).map { (i: Int) -> TraceEvent in
                let method = i % 3 == 0 ? "POST" : "GET"
                let error: String? = i % 5 == 0 ? "URLError.timedOut" : nil
                let rate: Double? = i % 2 == 0 ? 0.5 : nil
                let request = TraceEvent.Request(
                    method: method, route: "/r\(i % 7)", host: "api.example.com", status: statuses[i % 3],
                    durationMs: durations[i % 3], error: error, sampleRate: rate)
                return TraceEvent(timestamp: TraceFiles.day.adding(milliseconds: Int64(i)), .request(request))
            }
            var out = JSONOutput()
            TraceFileHeader(producer: "p\(f)", app: "test", appVersion: version, started: TraceFiles.day).encode(to: &out)
            out.bytes.append(0x0A)
            for event in events {
                event.encode(to: &out)
                out.bytes.append(0x0A)
                expected.add(event, appVersion: version)
            }
            let path = dir.file("\(f).jsonl.gz")
            try Data(GzipDeflater.compress(out.bytes)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        var export = OTLPExport(batchSize: 10_000) { _, payload in .sent(attempts: 1, bytesOnWire: payload.count) }
        export.readingThreads = 1
        var state = CumulativeExport(selection: "test")
        let outcome = export.run(TraceExportReader(), paths, state: &state)
        #expect(outcome.failure == nil && outcome.spans == 600)
        #expect(outcome.requests == 2, "both files in one batch, then the metrics")
        let got = state.metrics.text()
        #expect(got.contains("app_version=\"1.0\"") && got.contains("app_version=\"2.0\""))
        #expect(got == expected.text())
    }

    @Test("each file's batches arrive in order and every event once, with files read on several threads and sent on several lanes",
          arguments: [(1, 1), (2, 1), (3, 1), (2, 2), (3, 3), (4, 2)])
    func perFileOrder(threads: Int, lanes: Int) throws {
        let dir = TemporaryDirectory()
        let paths = try Self.files(in: dir)
        let seen = Locked<[String: [Int]]>([:])
        let inFlight = Locked((now: 0, most: 0))
        var export = OTLPExport(encoding: .json, batchSize: 97) { _, payload in
            inFlight.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            defer { inFlight.withLock { $0.now -= 1 } }
            let text = String(decoding: payload, as: UTF8.self)
            // Span names are "GET /f<file>/<i>".
            var got: [(String, Int)] = []
            for match in text.split(separator: "\"GET /f").dropFirst() {
                let parts = match.prefix { $0 != "\"" }.split(separator: "/")
                got.append((String(parts[0]), Int(parts[1])!))
            }
            // A file's next batch may not be delivered before this one is answered.
            seen.withLock { for (f, i) in got { $0[f, default: []].append(i) } }
            Thread.sleep(forTimeInterval: 0.002)
            return .sent(attempts: 1, bytesOnWire: payload.count)
        }
        export.readingThreads = threads
        export.sendingLanes = lanes
        export.sendsMetrics = false
        var state = CumulativeExport(selection: "test")
        let outcome = export.run(TraceExportReader(), paths, state: &state)
        #expect(outcome.failure == nil && outcome.spans == 8000)
        let got = seen.withLock { $0 }
        for f in 0..<4 { #expect(got["\(f)"] == Array(0..<2000), "file \(f)") }
        #expect(paths.allSatisfy { state.countedEvents(in: $0) == 2000 })
        #expect(inFlight.withLock { $0.most } <= lanes)
    }
}
