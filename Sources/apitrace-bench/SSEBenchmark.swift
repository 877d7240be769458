import APITraceSSE
import ArgumentParser
import Foundation

/// `apitrace-bench sse`: throughput of the Server-Sent Events parser on a large in-memory stream.
struct SSEBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sse",
        abstract: "Parser throughput (MB/s, events/s) on a large in-memory event stream fed in chunks."
    )

    @Option(help: "Size of the generated stream in MB.")
    var megabytes = 100

    @Option(help: "Chunk size in bytes, as URLSession would hand them over.")
    var chunkSize = 16 * 1024

    @Option(help: "Timed runs; the best and the median are printed.")
    var iterations = 5

    func run() throws {
        let (stream, expectedEvents) = Self.makeStream(bytes: megabytes * 1_000_000)
        let mb = Double(stream.count) / 1_000_000
        print("stream: \(String(format: "%.1f", mb)) MB, \(expectedEvents) events (avg \(stream.count / expectedEvents) B), chunks of \(chunkSize) B")

        var parserTimes: [Double] = []
        var scanTimes: [Double] = []
        for _ in 0..<iterations {
            let (seconds, events, checksum) = Self.parse(stream, chunkSize: chunkSize)
            guard events == expectedEvents else {
                throw ValidationError("parser produced \(events) events, expected \(expectedEvents) (checksum \(checksum))")
            }
            parserTimes.append(seconds)
            scanTimes.append(Self.scanLines(stream, chunkSize: chunkSize))
        }
        report("ServerSentEventParser", parserTimes, mb: mb, events: expectedEvents)
        report("baseline: memchr line split only", scanTimes, mb: mb, events: nil)
        let ratio = (parserTimes.sorted()[parserTimes.count / 2]) / (scanTimes.sorted()[scanTimes.count / 2])
        print("parser takes \(String(format: "%.2f", ratio))x the time of finding the line ends alone (median)")
    }

    private func report(_ name: String, _ times: [Double], mb: Double, events: Int?) {
        let sorted = times.sorted()
        let best = sorted[0]
        let median = sorted[sorted.count / 2]
        var line = "\(name): best \(String(format: "%.0f", mb / best)) MB/s, median \(String(format: "%.0f", mb / median)) MB/s"
        if let events {
            line += "; best \(String(format: "%.2f", Double(events) / best / 1e6)) M events/s"
            line += ", median \(String(format: "%.2f", Double(events) / median / 1e6)) M events/s"
        }
        print(line)
    }

    /// Parses `stream` in chunks; returns seconds, events and a checksum that keeps the work observable.
    static func parse(_ stream: [UInt8], chunkSize: Int) -> (Double, Int, Int) {
        var parser = ServerSentEventParser()
        var events = 0
        var checksum = 0
        let clock = ContinuousClock()
        let start = clock.now
        stream.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + chunkSize, all.count)
                parser.push(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { event in
                    events += 1
                    checksum &+= event.data.utf8.count &+ event.id.utf8.count &+ event.type.utf8.count
                }
                offset = end
            }
        }
        parser.finishStream()
        let elapsed = clock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, events, checksum)
    }

    /// Only finds the line feeds, chunk by chunk: the floor for any line-based parser.
    static func scanLines(_ stream: [UInt8], chunkSize: Int) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var lines = 0
        stream.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + chunkSize, all.count)
                var cursor = all.baseAddress! + offset
                let stop = all.baseAddress! + end
                while cursor < stop, let found = memchr(cursor, 0x0A, stop - cursor) {
                    lines += 1
                    cursor = UnsafeRawPointer(found) + 1
                }
                offset = end
            }
        }
        let elapsed = clock.now - start
        if lines == 0 { print("no lines") }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Realistic events: JSON payloads of varied size, ids on every event, a type on most, an occasional
    /// multi-line event and keep-alive comment.
    static func makeStream(bytes: Int) -> ([UInt8], Int) {
        var stream: [UInt8] = []
        stream.reserveCapacity(bytes + 4096)
        var generator = SystemRandomNumberGenerator()
        let types = ["news.update", "news.created", "app.status", "price"]
        let words = ["stability", "release", "crash-free", "sessions", "latency", "region", "build", "rollout", "users", "budget"]
        var n = 0
        while stream.count < bytes {
            n += 1
            var event = "id: \(n)\n"
            if n % 5 != 0 { event += "event: \(types[n % types.count])\n" }
            let wordCount = Int.random(in: 8...40, using: &generator)
            let text = (0..<wordCount).map { _ in words.randomElement(using: &generator)! }.joined(separator: " ")
            event += "data: {\"id\":\(n),\"title\":\"\(text.prefix(40))\",\"body\":\"\(text)\",\"score\":\(Double(n % 1000) / 10),\"published_at\":\"2026-11-22T10:00:00Z\"}\n"
            if n % 10 == 0 { event += "data: {\"continued\":true}\n" }
            event += "\n"
            if n % 50 == 0 { event += ": keep-alive\n" }
            stream.append(contentsOf: event.utf8)
        }
        return (stream, n)
    }
}
