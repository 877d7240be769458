package import APITraceFormat
import Foundation

/// Writes realistic, deterministic trace files for tests, benchmarks and demos.
///
/// The same configuration (seed included) always yields the same events and the same bytes.
/// Traffic looks like a mobile client's: templated routes with skewed popularity, log-normal
/// latencies, a mix of 2xx/4xx/5xx and transport failures with one flaky route and an error
/// spike in the middle of the span, decode failures (mostly the missing `stability` key of
/// `data.apps[3]`), recorded errors, SSE connections that close, reconnect and sometimes give up,
/// log lines and the odd `dropped` record.
///
/// ```swift
/// let generator = SyntheticTraceGenerator(configuration: .init(events: 10_000, files: 4, seed: 7))
/// let paths = try generator.write(to: "/tmp/traces")
/// ```
package struct SyntheticTraceGenerator: Sendable {
    /// What to generate.
    package struct Configuration: Sendable {
        /// Events in all files together (headers not counted).
        package var events: Int
        /// Files to split them over, each covering its own slice of the time span.
        package var files: Int
        /// Seed of the random generator.
        package var seed: UInt64
        /// Time of the first event.
        package var start: TraceTimestamp
        /// Milliseconds between consecutive events on average.
        package var meanIntervalMs: Double
        /// When set, successful requests carry this `sample_rate`.
        package var sampleRate: Double?
        /// zlib level for the files (6 is `gzip`'s default).
        package var compressionLevel: Int32

        /// Creates a configuration; by default events start on 2026-11-22T08:00:00Z, 50 ms apart.
        package init(
            events: Int, files: Int = 1, seed: UInt64 = 1,
            start: TraceTimestamp = TraceTimestamp(rfc3339: "2026-11-22T08:00:00Z")!, meanIntervalMs: Double = 50,
            sampleRate: Double? = nil, compressionLevel: Int32 = 6
        ) {
            self.events = max(0, events)
            self.files = max(1, files)
            self.seed = seed
            self.start = start
            self.meanIntervalMs = meanIntervalMs
            self.sampleRate = sampleRate
            self.compressionLevel = compressionLevel
        }
    }

    /// The configuration.
    package let configuration: Configuration

    /// Creates a generator.
    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Events in file `index` (0-based).
    package func eventCount(file index: Int) -> Int {
        let c = configuration
        return c.events / c.files + (index < c.events % c.files ? 1 : 0)
    }

    /// The header of file `index`. Files alternate between app versions `2.3.0` and `2.4.0`.
    package func header(file index: Int) -> TraceFileHeader {
        TraceFileHeader(
            producer: producer, app: "SampleApp", appVersion: index % 2 == 0 ? "2.3.0" : "2.4.0",
            host: "device-\(index % 3)", started: fileStart(index))
    }

    /// The file name of file `index`.
    package func fileName(file index: Int) -> String {
        TraceFileIdentity(started: fileStart(index), producer: producer, sequence: index + 1).fileName
    }

    private var producer: String {
        let hex = String(configuration.seed & 0xFFFF_FFFF, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    private func fileStart(_ index: Int) -> TraceTimestamp {
        let before = (0..<index).reduce(0) { $0 + eventCount(file: $1) }
        return configuration.start.adding(milliseconds: Int64(Double(before) * configuration.meanIntervalMs))
    }

    /// The whole time span the events cover, in milliseconds (about `events × meanIntervalMs`).
    package var spanMilliseconds: Int64 { Int64(Double(configuration.events) * configuration.meanIntervalMs) }

    /// Hands every event of file `index` to `body`, in order.
    package func forEachEvent(file index: Int, _ body: (TraceEvent) -> Void) {
        var state = SyntheticTraffic(
            seed: SplitMix64.mix(SplitMix64.mix(configuration.seed) &+ UInt64(index + 1) &* 0xD1B5_4A32_D192_ED03),
            start: fileStart(index), traceStart: configuration.start, span: spanMilliseconds,
            meanIntervalMs: configuration.meanIntervalMs, sampleRate: configuration.sampleRate)
        for _ in 0..<eventCount(file: index) { body(state.next()) }
    }

    /// All events of file `index`, for tests.
    package func events(file index: Int) -> [TraceEvent] {
        var events: [TraceEvent] = []
        events.reserveCapacity(eventCount(file: index))
        forEachEvent(file: index) { events.append($0) }
        return events
    }

    /// Writes the files into `directory` (created when missing) and returns their paths.
    package func write(to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try (0..<configuration.files).map { index in
            let path = (directory.hasSuffix("/") ? directory : directory + "/") + fileName(file: index)
            try writeFile(index, to: path)
            return path
        }
    }

    private func writeFile(_ index: Int, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        let deflater = try GzipDeflater(level: configuration.compressionLevel)
        var out = JSONOutput()
        var compressed: [UInt8] = []
        header(file: index).encode(to: &out)
        out.bytes.append(0x0A)
        var failure: (any Error)?
        func drain(_ flush: GzipDeflater.Flush) {
            out.bytes.withUnsafeBytes { deflater.compress($0, flush: flush, into: &compressed) }
            out.bytes.removeAll(keepingCapacity: true)
            if !compressed.isEmpty, failure == nil {
                do { try handle.write(contentsOf: compressed) } catch { failure = error }
                compressed.removeAll(keepingCapacity: true)
            }
        }
        forEachEvent(file: index) { event in
            event.encode(to: &out)
            out.bytes.append(0x0A)
            if out.bytes.count >= 1 << 18 { drain(.none) }
        }
        drain(.finish)
        if let failure { throw failure }
    }
}
