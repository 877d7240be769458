public import APITraceFormat
import Foundation

/// Writes real gzip trace files of generated traffic, with timestamps relative to a fixed instant.
public enum TraceFixture {
    /// 2026-11-22T12:00:00Z, the `--now` of the tests.
    public static let now = TraceTimestamp(rfc3339: "2026-11-22T12:00:00Z")!
    public static let minute: Int64 = 60_000

    public static func at(minutes: Int64) -> TraceTimestamp { now.adding(milliseconds: minutes * minute) }

    /// A stretch of traffic: `perMinute` requests a minute on `route`, a share of them failing with 503.
    public struct Traffic {
        public var from: Int64  // minutes relative to now (negative = before)
        public var to: Int64
        public var perMinute: Int
        public var failureRatio: Double
        public var route: String
        public var host: String
        public var sampleRate: Double?
        public var failureStatus: Int?

        public init(from: Int64, to: Int64, perMinute: Int, failureRatio: Double, route: String = "/apps/{id}",
                    host: String = "api.example.com", sampleRate: Double? = nil, failureStatus: Int? = 503) {
            self.from = from; self.to = to; self.perMinute = perMinute; self.failureRatio = failureRatio
            self.route = route; self.host = host; self.sampleRate = sampleRate; self.failureStatus = failureStatus
        }
    }

    /// The requests of some traffic, failures spread evenly (the first failure in each minute at the start).
    public static func events(_ traffic: [Traffic]) -> [TraceEvent] {
        var events: [TraceEvent] = []
        for t in traffic {
            var owed = 0.0
            for m in t.from..<t.to {
                for i in 0..<t.perMinute {
                    let ts = at(minutes: m).adding(milliseconds: Int64(i) * minute / Int64(t.perMinute))
                    owed += t.failureRatio
                    let fails = owed >= 1 - 1e-9
                    if fails { owed -= 1 }
                    events.append(TraceEvent(timestamp: ts, session: "s1", .request(.init(
                        method: "GET", route: t.route, host: t.host, status: fails ? t.failureStatus : 200, durationMs: 42,
                        error: fails ? (t.failureStatus == nil ? "URLError.timedOut" : nil) : nil,
                        sampleRate: fails ? nil : t.sampleRate))))
                }
            }
        }
        return events.sorted { $0.timestamp < $1.timestamp }
    }

    /// Writes events into hourly files of one producer (`<start>-<producer>-<seq>.jsonl.gz`), like the writer does.
    @discardableResult
    public static func write(_ events: [TraceEvent], to directory: String, producer: String = "fixture1", appVersion: String = "2.1") throws -> [String] {
        let byHour = Dictionary(grouping: events) { $0.timestamp.millisecondsSince1970 / 3_600_000 }
        var paths: [String] = []
        for (sequence, hour) in byHour.keys.sorted().enumerated() {
            let start = TraceTimestamp(millisecondsSince1970: hour * 3_600_000)
            let header = TraceFileHeader(producer: producer, app: "Otec", appVersion: appVersion, host: "phone-7", started: start)
            var text = header.jsonLine + "\n"
            for event in byHour[hour]! { text += event.jsonLine + "\n" }
            let name = TraceFileIdentity(started: start, producer: producer, sequence: sequence + 1).fileName
            let path = directory + "/" + name
            try Data(try GzipDeflater.compress(Array(text.utf8), level: 5)).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        return paths
    }

    /// A rules file in a folder, pointing notifiers at a receiver.
    public static func rules(_ text: String, in directory: TemporaryDirectory, name: String = "rules.yaml") throws -> String {
        let path = directory.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
