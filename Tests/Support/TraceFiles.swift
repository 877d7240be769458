public import APITraceFormat
import Foundation

/// Builds trace files in memory: a header and request events, gzip-compressed as the writer does.
public enum TraceFiles {
    public static let day = TraceTimestamp(rfc3339: "2026-11-22T10:00:00.000Z")!

    /// A complete trace file: header + `events` request lines.
    public static func make(producer: String, started: TraceTimestamp = day, events: [TraceEvent] = [], version: Int = 1) -> [UInt8] {
        var out = JSONOutput()
        TraceFileHeader(version: version, producer: producer, app: "test", started: started).encode(to: &out)
        out.bytes.append(0x0A)
        for event in events {
            event.encode(to: &out)
            out.bytes.append(0x0A)
        }
        return try! GzipDeflater.compress(out.bytes)
    }

    /// `count` request events with varied routes, statuses and durations, starting at `start`.
    public static func requests(_ count: Int, seed: Int, start: TraceTimestamp = day) -> [TraceEvent] {
        let routes = [("GET", "/v1/users/{id}"), ("POST", "/v1/orders"), ("GET", "/v1/search")]
        return (0..<count).map { i in
            let k = (i * 7919 + seed * 104_729) % 1000
            let (method, route) = routes[(i + seed) % routes.count]
            let status: Int? = k % 50 == 0 ? nil : (k % 23 == 0 ? 503 : (k % 17 == 0 ? 404 : 200))
            return TraceEvent(
                timestamp: start.adding(milliseconds: Int64(i * 10)),
                .request(.init(method: method, route: route, status: status, durationMs: Double(k % 400) + Double(i % 10) / 10,
                               error: status == nil ? "timed out" : nil)))
        }
    }

    /// Writes `count` finished files named like the writer's into `dir`; returns their paths.
    @discardableResult
    public static func writeFinished(_ count: Int, to dir: String, eventsPerFile: Int = 20, producer: String = "uploader") -> [String] {
        (0..<count).map { i in
            let started = day.adding(milliseconds: Int64(i) * 1000)
            let name = TraceFileIdentity(started: started, producer: producer, sequence: i + 1).fileName
            let path = dir + "/" + name
            let bytes = make(producer: producer, started: started, events: requests(eventsPerFile, seed: i, start: started))
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            return path
        }
    }

    /// Every file under `root`, recursively, as paths relative to it (hidden ones included, but
    /// not the collector's journals under `.producers/` nor its instances' counters under `.collectors/`).
    public static func allFiles(under root: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDir), !isDir.boolValue,
               !relative.hasPrefix(".producers/"), !relative.hasPrefix(".collectors/") {
                files.append(relative)
            }
        }
        return files.sorted()
    }
}
