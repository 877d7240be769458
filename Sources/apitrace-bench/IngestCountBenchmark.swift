import APITraceCollector
import APITraceExport
import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench ingest-count`: the collector's counting of an upload in process, without HTTP,
/// against inflating it alone, on the body `collect` sends (a header and 2,000 realistic events).
///
/// What `apitrace collect` does per upload with `--no-ingest-metrics` (its ``UploadValidator``:
/// inflate in 16 KiB slices of gzip, checking sizes and the header) and without it (the same pass
/// with an ``IngestTally``, which reads each inflated block into a counted tally, then added to
/// the counters as the collector's `/metrics` adds it), so the difference is counting alone. Small and repeatable:
/// run one mode under `valgrind --tool=callgrind` for instruction counts on a loaded machine.
struct IngestCountBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest-count",
        abstract: "Counting an upload at ingest in process (inflate + count) against inflating it alone."
    )

    @Option(help: "Uploads per mode.")
    var uploads = 200

    @Option(help: "Events per upload.")
    var eventsPerFile = 2_000

    @Option(help: "off: inflate only; on: inflate and count; both: each, alternated (timed).")
    var mode = "both"

    func run() throws {
        let events = RealisticEvents.make(count: eventsPerFile)
        var out = JSONOutput()
        TraceFileHeader(producer: "bench", started: events[0].timestamp).encode(to: &out)
        out.bytes.append(0x0A)
        for event in events { event.encode(to: &out); out.bytes.append(0x0A) }
        let body = try GzipDeflater.compress(out.bytes, level: 5)
        let plainPerLine = Double(out.bytes.count) / Double(eventsPerFile + 1)
        switch mode {
        case "off": _ = try Self.upload(body, counting: false, times: uploads)
        case "on": _ = try Self.upload(body, counting: true, times: uploads)
        default:
            var off: [Double] = [], on: [Double] = []
            for _ in 0..<5 {
                off.append(try Measure.seconds { _ = try Self.upload(body, counting: false, times: uploads) } / Double(uploads))
                on.append(try Measure.seconds { _ = try Self.upload(body, counting: true, times: uploads) } / Double(uploads))
            }
            let bestOff = off.min()!, bestOn = on.min()!
            print("ingest-count: \(eventsPerFile) events per upload (\(Measure.format(plainPerLine, 0)) bytes a line), best of 5 x \(uploads) uploads")
            print("  inflate only: \(Measure.format(bestOff * 1000, 3)) ms per upload")
            print("  inflate and count: \(Measure.format(bestOn * 1000, 3)) ms per upload; counting \(Measure.format((bestOn - bestOff) * 1e9 / Double(eventsPerFile), 0)) ns per line")
        }
    }

    /// Checks `body` `times` times as the collector checks an upload (its own ``UploadValidator``,
    /// at the collector's default limits), counting its lines into an ``IngestTally`` when `counting`
    /// and adding each tally to the counters, as the collector's metrics do once it is stored;
    /// returns the events counted.
    static func upload(_ body: [UInt8], counting: Bool, times: Int) throws -> Int {
        let validator = UploadValidator(maxDecompressedBytes: 1 << 30)
        var metrics = OpenMetricsExporter()
        var events = 0
        for _ in 0..<times {
            let tally = counting ? IngestTally(limits: .init()) : nil
            _ = try body.withUnsafeBytes { try validator.validate($0, counting: tally) }
            if let tally {
                let (counted, scan) = tally.counted
                guard scan.events > 0 else { throw BenchError("nothing counted") }
                metrics.add(counted)
                events += scan.events
            }
        }
        return events
    }
}
