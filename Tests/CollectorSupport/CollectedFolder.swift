import APITraceCollector
public import APITraceTestSupport
import APITraceFormat
import Foundation

/// A folder filled through the collector (six files over two days, with non-request events mixed
/// in) and its per-route table computed independently in Swift: what the documented SQL queries
/// (the collection tests) and `apitrace report` (the CLI tests) are checked against.
public enum CollectedFolder {
    /// One route of the per-route table.
    public struct Row: Equatable, CustomStringConvertible {
        public var method, route: String
        public var count, errors, clientErrors: Int
        public var p50, p95, p99: Double
        public var description: String { "\(method) \(route) n=\(count) err=\(errors) 4xx=\(clientErrors) p50=\(p50) p95=\(p95) p99=\(p99)" }

        public init(method: String, route: String, count: Int, errors: Int, clientErrors: Int, p50: Double, p95: Double, p99: Double) {
            self.method = method; self.route = route
            self.count = count; self.errors = errors; self.clientErrors = clientErrors
            self.p50 = p50; self.p95 = p95; self.p99 = p99
        }
    }

    /// A check of the filling that did not hold.
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    /// Fills a collector folder through the collector itself: files over two days, with non-request events mixed in.
    public static func fill(_ dir: TemporaryDirectory) throws {
        let collector = try TraceCollector(configuration: .init(directory: dir.path, tokens: ["t"]))
        for i in 0..<6 {
            let started = TraceFiles.day.adding(milliseconds: Int64(i) * 4 * 3_600_000)
            var events = TraceFiles.requests(400 + i * 37, seed: i, start: started)
            events.insert(TraceEvent(timestamp: started, .log(.init(level: "info", message: "m", metadata: ["k": "v"]))), at: 3)
            events.append(TraceEvent(timestamp: started, .sse(.init(phase: .init(rawValue: "open"), route: "/v1/orders", status: 500, durationMs: 99_999))))
            let bytes = TraceFiles.make(producer: "q\(i)", started: started, events: events)
            let reply = bytes.withUnsafeBytes { collector.receive(authorization: "Bearer t", contentDigest: nil, body: $0) }
            guard reply.status == 201 else { throw Failure(description: "the collector answered \(reply.status) to file \(i)") }
        }
        let days = Set(TraceFiles.allFiles(under: dir.path).map { $0.prefix(13) })
        guard days.count == 2 else { throw Failure(description: "expected two day folders, found \(days.sorted())") }
    }

    /// The per-route table computed in Swift: errors = no status or 5xx, client errors = 4xx, linear-interpolated percentiles.
    public static func expected(_ dir: TemporaryDirectory) -> [Row] {
        var groups: [String: (method: String, route: String, durations: [Double], errors: Int, client: Int)] = [:]
        for relative in TraceFiles.allFiles(under: dir.path) {
            _ = TraceFileReader(path: dir.file(relative)).forEachEvent { event in
                guard case .request(let r) = event.payload else { return }
                var g = groups[r.method + " " + r.route] ?? (r.method, r.route, [], 0, 0)
                g.durations.append(r.durationMs)
                if r.status == nil || r.status! >= 500 { g.errors += 1 }
                if let s = r.status, (400..<500).contains(s) { g.client += 1 }
                groups[r.method + " " + r.route] = g
            }
        }
        func quantile(_ sorted: [Double], _ q: Double) -> Double {
            let position = Double(sorted.count - 1) * q
            let low = Int(position.rounded(.down)), high = min(low + 1, sorted.count - 1)
            return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
        }
        return groups.values.map { g in
            let s = g.durations.sorted()
            return Row(method: g.method, route: g.route, count: s.count, errors: g.errors, clientErrors: g.client,
                       p50: quantile(s, 0.5), p95: quantile(s, 0.95), p99: quantile(s, 0.99))
        }.sorted { ($0.count, $1.method, $1.route) > ($1.count, $0.method, $0.route) }
    }
}
