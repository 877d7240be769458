public import APITraceFormat
public import Foundation

extension FailureComparisonCounts {
    /// Counts and the problems met reading them.
    public struct Read: Sendable {
        /// The counts of both sides.
        public var counts: FailureComparisonCounts
        /// Trace files opened (the rest were pruned by name or declined by app version).
        public var filesRead = 0
        /// Problems reading files (damaged, unreadable), in file order.
        public var warnings: [TraceReadWarning] = []
    }

    /// Reads the trace files under `paths` that can hold events of either side and counts each
    /// request and decode failure into the side(s) whose filter it matches (both, when they overlap).
    ///
    /// Files are pruned by name (``TraceFileSelection``) to the two sides' time ranges and read on
    /// all cores through the format module's one line loop; counts are merged as each file is done.
    public static func read(paths: [String], windows: ComparisonWindows, parallelism: Int = ProcessInfo.processInfo.activeProcessorCount) -> Read {
        let found = TraceFileDiscovery.find(paths)
        let sides = [windows.window, windows.baseline]
        let ranges = sides.map { ($0.since?.millisecondsSince1970 ?? .min)..<($0.until?.millisecondsSince1970 ?? .max) }
        let files = TraceFileSelection.select(found.files, overlapping: ranges)
        let total = Locked(Read(counts: FailureComparisonCounts()))
        let routePatterns = sides.map { $0.route.map { TextPattern($0) } }
        _ = ParallelTraceReader.map(files, parallelism: parallelism) { reader in
            var tally: FileTally?
            var active = [false, false]
            let scan = reader.forEachRecord(header: { header in
                active = sides.map { $0.matches(header: header) }
                tally = FileTally(appVersion: header.appVersion ?? "-")
                return active.contains(true)
            }) { record, _ in
                guard record.kind == .request || record.kind == .decodeFailure else { return true }
                let time = TraceTimestamp(millisecondsSince1970: record.timestamp)
                for side in Side.allCases where active[side.rawValue] {
                    let filter = sides[side.rawValue]
                    guard filter.matches(time: time) else { continue }
                    if let pattern = routePatterns[side.rawValue] {
                        guard let route = record.route, route.hasEscapes ? pattern.matches(route.string) : pattern.matches(route.bytes) else { continue }
                    }
                    if let host = filter.hostPattern {
                        guard record.kind == .request, let h = record.host, host.matches(h) else { continue }
                    }
                    tally!.add(record, side: side)
                }
                return true
            }
            total.withLock { read in
                tally?.merge(into: &read.counts)
                if scan.header != nil && !scan.declined { read.filesRead += 1 }
                read.warnings += scan.warnings
            }
        }
        var read = total.withLock { $0 }
        // Merge order varies between runs; keep warnings in file order.
        let order = Dictionary(files.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        read.warnings = found.warnings + read.warnings.enumerated().sorted {
            (order[$0.element.path] ?? -1, $0.offset) < (order[$1.element.path] ?? -1, $1.offset)
        }.map(\.element)
        return read
    }
}
