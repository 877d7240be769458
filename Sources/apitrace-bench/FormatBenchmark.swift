import APITraceFormat
import ArgumentParser
import Foundation

/// `apitrace-bench format`: the trace writer and reader against gzip.
struct FormatBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "format",
        abstract: "Append cost, writer throughput per compression level, and reader speed next to gzip -dc."
    )

    @Option(help: "Events in the reader's file.")
    var readerEvents = 2_000_000

    @Option(help: "Events per compression-level run.")
    var levelEvents = 300_000

    @Option(help: "Folder for the generated files (kept between runs).")
    var workDirectory = NSTemporaryDirectory() + "apitrace-bench"

    func run() throws {
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        appendCost()
        try levels()
        try reader()
    }

    /// Nanoseconds per `append` on the caller's thread, including stamping the event with the time.
    func appendCost() {
        let dir = workDirectory + "/append"
        try? FileManager.default.removeItem(atPath: dir)
        let events = RealisticEvents.make(count: 100_000)
        let writer = TraceFileWriter(configuration: .init(directory: dir, bufferCapacity: 100_000))
        let batch = 100
        var perAppend: [Double] = []
        for round in 0..<20 {
            for start in stride(from: 0, to: events.count, by: batch) {
                let t0 = Measure.nanoseconds()
                for i in start..<(start + batch) {
                    var event = events[i]
                    event.timestamp = .now()
                    writer.append(event)
                }
                perAppend.append(Double(Measure.nanoseconds() - t0) / Double(batch))
            }
            _ = round
            writer.flush()
        }
        writer.close()
        perAppend.sort()
        let stats = writer.statistics
        print("append (caller thread, batches of \(batch), \(perAppend.count * batch) appends):")
        print("  median \(Measure.format(Measure.quantile(perAppend, 0.5))) ns, p99 \(Measure.format(Measure.quantile(perAppend, 0.99))) ns per append; dropped \(stats.droppedBufferFull) of \(stats.appended)")
    }

    /// Background writer work (encode + compress) at each level, with the ratio it achieves.
    func levels() throws {
        let events = RealisticEvents.make(count: levelEvents)
        var raw: [UInt8] = []
        var out = JSONOutput()
        let encodeSeconds = Measure.seconds {
            for event in events {
                out.bytes.removeAll(keepingCapacity: true)
                event.encode(to: &out)
                raw.append(contentsOf: out.bytes)
                raw.append(0x0A)
            }
        }
        let mb = Double(raw.count) / 1e6
        print("writer (encode + compress, \(events.count) events, \(Measure.format(mb)) MB of JSON, \(Measure.format(Double(raw.count) / Double(events.count), 0)) bytes/event):")
        print("  encode only: \(Measure.format(Double(events.count) / encodeSeconds / 1e6, 2)) M events/s, \(Measure.format(mb / encodeSeconds)) MB/s")
        print("  level  events/s     MB/s   ratio")
        for level: Int32 in [1, 2, 3, 4, 5, 6, 7, 9] {
            var compressed: [UInt8] = []
            let deflater = try GzipDeflater(level: level)
            let seconds = Measure.seconds {
                raw.withUnsafeBytes { all in
                    var offset = 0
                    while offset < all.count {
                        let end = min(all.count, offset + 256 * 1024)
                        deflater.compress(UnsafeRawBufferPointer(rebasing: all[offset..<end]), flush: .none, into: &compressed)
                        offset = end
                    }
                }
                deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish, into: &compressed)
            } + encodeSeconds
            print("  \(level)      \(Measure.format(Double(events.count) / seconds / 1e3, 0))k   \(Measure.format(mb / seconds))   \(Measure.format(Double(raw.count) / Double(compressed.count), 2))x")
        }
    }

    /// Reader events/s on a large file next to `gzip -dc` on the same file.
    func reader() throws {
        let path = workDirectory + "/reader-\(readerEvents).jsonl.gz"
        if !FileManager.default.fileExists(atPath: path) {
            print("writing \(readerEvents) events to \(path) ...")
            let deflater = try GzipDeflater(level: 6)
            var compressed: [UInt8] = []
            var out = JSONOutput()
            TraceFileHeader(producer: "bench", started: .init(millisecondsSince1970: 1_795_341_600_000)).encode(to: &out)
            out.bytes.append(0x0A)
            let fd = open(path + ".tmp", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            var written = 0
            while written < readerEvents {
                for event in RealisticEvents.make(count: min(100_000, readerEvents - written), seed: UInt64(written)) {
                    event.encode(to: &out)
                    out.bytes.append(0x0A)
                }
                written += min(100_000, readerEvents - written)
                out.bytes.withUnsafeBytes { deflater.compress($0, flush: written == readerEvents ? .finish : .none, into: &compressed) }
                out.bytes.removeAll(keepingCapacity: true)
                compressed.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
                compressed.removeAll(keepingCapacity: true)
            }
            close(fd)
            rename(path + ".tmp", path)
        }
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.doubleValue ?? 0
        let gzipSeconds = try Measure.shell("gzip -dc '\(path)' > /dev/null")
        var lines = 0
        var rawBytes = 0
        let rawSeconds = Measure.seconds {
            let result = TraceFileReader(path: path).forEachRawLine { _, _ in lines += 1; return true }
            rawBytes = result.bytes
        }
        var events = 0
        let typedSeconds = Measure.seconds {
            events = TraceFileReader(path: path).forEachEvent { _ in }.events
        }
        print("reader (\(events) events, \(Measure.format(Double(rawBytes) / 1e6)) MB JSON, \(Measure.format(size / 1e6)) MB gzip, one file, one core):")
        print("  gzip -dc > /dev/null         \(Measure.format(gzipSeconds, 2)) s")
        print("  decompress + split lines     \(Measure.format(rawSeconds, 2)) s  (\(Measure.format(rawSeconds / gzipSeconds, 2))x gzip -dc)")
        print("  typed events (TraceEvent)    \(Measure.format(typedSeconds, 2)) s  (\(Measure.format(typedSeconds / gzipSeconds, 2))x gzip -dc), \(Measure.format(Double(events) / typedSeconds / 1e6, 2)) M events/s, \(Measure.format(Double(rawBytes) / typedSeconds / 1e6)) MB/s")
        _ = lines
    }
}
