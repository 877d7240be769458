import Foundation

/// Chooses the trace files that can hold events of some time ranges, from names alone: the one
/// pruning rule of `report`, `export`, `cat` and `alert`.
///
/// A file named `<start>-<producer>-<sequence>` holds events from its start until the next file
/// of the same producer starts; the last file of a producer ends at its modification time (or is
/// always read when that lies before its start). Both ends are widened by ``slack`` (2 minutes):
/// events timestamped before the writer named its file, events queued around a rotation, and
/// clock skew between the producer and this machine, so pruning never skips an event that a
/// producer following Docs/trace-format.md wrote. Files whose names do not follow the pattern are
/// always read.
package enum TraceFileSelection {
    /// Widening of every file's time span on both sides.
    package static let slack: Int64 = 120_000


    /// The files (in the given order) whose span overlaps any of `ranges` (milliseconds, half-open).
    package static func select(_ files: [String], overlapping ranges: [Range<Int64>]) -> [String] {
        plan(files, overlapping: ranges).map(\.path)
    }

    /// A file chosen for reading.
    package struct SelectedFile: Sendable {
        /// Its path.
        package var path: String
        /// For a finished file (its producer has started a later one), the time span it can hold,
        /// widened by an hour each side; nil for a file that may still grow or has no parsable name.
        package var finishedSpan: Range<Int64>?

        /// True when what is read from this file may be kept for later runs (the alert's count
        /// cache, the report's summary cache): the file is finished, so its writer will not append
        /// to it, and its name-span is at most ``TraceFileSelection/maximumCachedSpan``. A file whose name claims a span
        /// longer than any writer's rotation (two files of one producer named days apart) is read
        /// every time: memory and cache entries follow real rotations, not file names.
        package var isCacheable: Bool {
            guard let span = finishedSpan else { return false }
            return span.upperBound - span.lowerBound <= TraceFileSelection.maximumCachedSpan
        }
    }

    /// Longest span (from names, with the hour of margin each side of ``SelectedFile/finishedSpan``)
    /// of a file whose reading is cached: two days and the margins.
    package static let maximumCachedSpan: Int64 = 2 * 86_400_000 + 2 * 3_600_000

    /// Every file, saying which are finished (``plan(_:overlapping:)`` over all time).
    package static func plan(_ files: [String]) -> [SelectedFile] {
        plan(files, overlapping: [Int64.min..<Int64.max])
    }

    /// Like ``select(_:overlapping:)``, saying which files are finished.
    package static func plan(_ files: [String], overlapping ranges: [Range<Int64>]) -> [SelectedFile] {
        // Skip the modification-time reads when nothing can be pruned.
        let everything = ranges.contains { $0.lowerBound == .min && $0.upperBound == .max }
        var parsed: [(index: Int, name: TraceFileName)] = []
        var keep = [Bool](repeating: false, count: files.count)
        var finished = [Range<Int64>?](repeating: nil, count: files.count)
        for (i, path) in files.enumerated() {
            if let name = TraceFileName(fileName: path) { parsed.append((i, name)) } else { keep[i] = true }
        }
        let byProducer = Dictionary(grouping: parsed, by: { $0.name.producer })
        for (_, group) in byProducer {
            let sorted = group.sorted { ($0.name.started, $0.name.sequence) < ($1.name.started, $1.name.sequence) }
            for (k, entry) in sorted.enumerated() {
                let start = entry.name.started.millisecondsSince1970 - slack
                let end: Int64
                if k + 1 < sorted.count {
                    end = sorted[k + 1].name.started.millisecondsSince1970 + slack
                    finished[entry.index] = (start + slack - 3_600_000)..<(end - slack + 3_600_000)
                } else {
                    // A modification time before the start means a skewed clock or a copied file: keep it.
                    let modified = everything ? nil : modificationTime(files[entry.index])
                    end = modified.map { $0 >= entry.name.started.millisecondsSince1970 ? $0 + slack : .max } ?? .max
                }
                if ranges.contains(where: { $0.lowerBound < end && start < $0.upperBound }) { keep[entry.index] = true }
            }
        }
        return files.indices.filter { keep[$0] }.map { SelectedFile(path: files[$0], finishedSpan: finished[$0]) }
    }

    private static func modificationTime(_ path: String) -> Int64? {
        FileStatus(path: path)?.modifiedMilliseconds
    }

    /// The files that can hold events in `[since, until)` (either end open), in the given order.
    package static func select(_ files: [String], since: TraceTimestamp?, until: TraceTimestamp?) -> [String] {
        guard since != nil || until != nil else { return files }
        let range = (since?.millisecondsSince1970 ?? .min)..<(until?.millisecondsSince1970 ?? .max)
        return select(files, overlapping: [range])
    }
}
