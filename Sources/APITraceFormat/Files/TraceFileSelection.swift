import Foundation

/// Chooses the trace files that can hold events of some time ranges, from names alone: the one
/// pruning rule of `report`, `export`, `cat` and `alert`.
///
/// A file (``TraceFileIdentity``) holds events from its start until the end its name gives (a
/// collector's sealed file), else until the next file of the same producer starts; the last
/// file a writer wrote ends at its modification time (or is always read when that lies before its
/// start), and the last stored or open file of a producer is always read. A file is finished (its
/// reading may be cached) when its name says so (a collector's sealed or stored file), when its
/// producer started a later one, or when it is read-only and no writer holds its lock (the
/// writer's mark of a finished file). Both ends are widened by ``slack`` (2 minutes):
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
        /// For a finished file (see ``TraceFileSelection``), the time span it can hold,
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
        var parsed: [(index: Int, name: TraceFileIdentity)] = []
        var keep = [Bool](repeating: false, count: files.count)
        var finished = [Range<Int64>?](repeating: nil, count: files.count)
        for (i, path) in files.enumerated() {
            if let name = TraceFileIdentity(fileName: path) { parsed.append((i, name)) } else { keep[i] = true }
        }
        let hour: Int64 = 3_600_000
        let byProducer = Dictionary(grouping: parsed, by: { $0.name.producer })
        for (_, group) in byProducer {
            let sorted = group.sorted { ($0.name.started, $0.name.sequence ?? .max) < ($1.name.started, $1.name.sequence ?? .max) }
            // The collector renames an open file to its sealed name: a listing taken during the rename may hold both.
            let sealedStarts = Set(sorted.filter { $0.name.isFinishedByConstruction }.map(\.name.started))
            for (k, entry) in sorted.enumerated() {
                let started = entry.name.started.millisecondsSince1970
                let start = started - slack
                let end: Int64
                if case .open = entry.name.kind, sealedStarts.contains(entry.name.started) { continue }
                if let ended = entry.name.ended?.millisecondsSince1970 {
                    // Sealed: the collector put the end of its events in the name; finished by construction.
                    end = ended >= started ? ended + slack : .max
                    if ended >= started { finished[entry.index] = (started - hour)..<(ended + hour) }
                } else if let next = nextStart(after: k, in: sorted) {
                    // Any later file of the producer holds later writer files, so this one's events end by its start.
                    end = next + slack
                    if entry.name.kind != .open { finished[entry.index] = (started - hour)..<(next + hour) }
                } else if case .written = entry.name.kind, let closed = closedAt(files[entry.index]) {
                    // A producer's last file, read-only and unlocked: its writer finished it when it was last modified
                    // (a file copied with an earlier time than its start, or a skewed clock, is kept and not cached).
                    end = closed >= started ? closed + slack : .max
                    if closed >= started { finished[entry.index] = (started - hour)..<(closed + hour) }
                } else if case .written = entry.name.kind, !everything {
                    // A modification time before the start means a skewed clock or a copied file: keep it.
                    let modified = modificationTime(files[entry.index])
                    end = modified.map { $0 >= started ? $0 + slack : .max } ?? .max
                } else {
                    // Stored files are in the producer's clock, their modification times in the collector's: never compared.
                    end = .max
                }
                if ranges.contains(where: { $0.lowerBound < end && start < $0.upperBound }) { keep[entry.index] = true }
            }
        }
        return files.indices.filter { keep[$0] }.map { SelectedFile(path: files[$0], finishedSpan: finished[$0]) }
    }

    /// The start of the first file after `k` that a writer started later: a later start, or the
    /// same second with a higher sequence of the same run.
    private static func nextStart(after k: Int, in sorted: [(index: Int, name: TraceFileIdentity)]) -> Int64? {
        let mine = sorted[k].name
        for entry in sorted[(k + 1)...] {
            if entry.name.started > mine.started { return entry.name.started.millisecondsSince1970 }
            if let a = mine.sequence, let b = entry.name.sequence, b > a { return entry.name.started.millisecondsSince1970 }
        }
        return nil
    }

    /// The modification time of a writer's file that is finished: read-only (the writer's mark,
    /// Docs/trace-format.md) and held by no writer's lock; nil otherwise. A `stat`, and for a
    /// read-only file an `open` and a non-blocking `flock`: once per producer's last file.
    private static func closedAt(_ path: String) -> Int64? {
        var info = stat()
        guard FileSystemPath.withBytes(of: path, { stat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              info.st_mode & 0o222 == 0 else { return nil }
        guard case .success(let fd) = RegularFile.open(path) else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return nil }
        flock(fd, LOCK_UN)
        return FileStatus(path: path)?.modifiedMilliseconds
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
