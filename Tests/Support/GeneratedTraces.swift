public import APITraceFormat
package import APITraceSynthetic
import Foundation

/// Generated traces written to disk, with the same events in memory for independent checks.
public struct GeneratedTraces {
    public let folder = TemporaryDirectory()
    package let generator: SyntheticTraceGenerator
    public let paths: [String]
    /// Events per file, as generated (not read back).
    public let events: [[TraceEvent]]

    public init(events: Int = 6000, files: Int = 3, seed: UInt64 = 42, sampleRate: Double? = nil) throws {
        let generator = SyntheticTraceGenerator(configuration: .init(events: events, files: files, seed: seed, sampleRate: sampleRate))
        self.generator = generator
        paths = try generator.write(to: folder.path)
        self.events = (0..<files).map { generator.events(file: $0) }
    }

    public var allEvents: [TraceEvent] { events.flatMap { $0 } }
}

/// The exact nearest-rank percentile of `values` (sorted here), computed independently of the sketch.
public func exactPercentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    // Computed as p × n / 100 with a small tolerance, so that 99.9 % of 20,000 is rank 19,980
    // and not 19,981 through floating-point fuzz.
    let rank = max(1, Int((p * Double(sorted.count) / 100 - 1e-9).rounded(.up)))
    return sorted[min(sorted.count, rank) - 1]
}

/// Writes `bytes` gzip-compressed to `path`.
public func writeGzip(_ text: String, to path: String) throws {
    let compressed = try GzipDeflater.compress(Array(text.utf8))
    try Data(compressed).write(to: URL(fileURLWithPath: path))
}
