import APITraceFormat
import Foundation

/// Merges the valid event lines of several trace files into one stream in time order (`apitrace cat --sort`),
/// each line passed on as it is in its file.
///
/// Files are read in the order their names start (files whose names carry no start are read
/// first), and a line is held back only until no file still to be read can hold an earlier event.
/// That bound is the rule file pruning stands on (``TraceFileSelection``): a file holds no events
/// from more than ``TraceFileSelection/slack`` before its name's start. Lines held back take at most
/// ``memoryLimit`` bytes of memory: past it they are sorted and spilled as a run to a temporary file
/// (``SpilledLineRun``), and runs are merged as they are written, so a single large file, or many
/// overlapping ones, sorts in bounded memory. Lines of equal time keep file order, then line order. A
/// line that breaks the rule (earlier than lines already written) is written at once and counted in
/// ``Result/outOfOrder``.
package struct TraceLineMerger: Sendable {
    /// Lines printed.
    package var filter: TraceLineFilter
    /// Bytes of held-back lines kept in memory before they are spilled to a temporary file.
    package var memoryLimit: Int
    /// Folder for the temporary runs (unlinked as soon as they are made).
    package var temporaryDirectory: String

    package init(filter: TraceLineFilter, memoryLimit: Int = 64 << 20, temporaryDirectory: String = Self.defaultTemporaryDirectory) {
        self.filter = filter
        self.memoryLimit = memoryLimit
        self.temporaryDirectory = temporaryDirectory
    }

    /// `TMPDIR`, else `/tmp`.
    package static var defaultTemporaryDirectory: String {
        let dir = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
        return dir.isEmpty ? "/tmp" : (dir.hasSuffix("/") && dir.count > 1 ? String(dir.dropLast()) : dir)
    }

    /// What merging met.
    package struct Result: Sendable {
        /// Each file's scan, in the order the files were given.
        package var scans: [TraceFileReader.RecordScan] = []
        /// Lines that came too late to be written in time order.
        package var outOfOrder = 0
    }

    /// Merges the lines of `files` into `write`, in time order.
    ///
    /// - Throws: ``SortSpillError`` when lines could not be spilled to the temporary folder; what
    ///   was written before stays written.
    package func merge(_ files: [String], to write: (UnsafeRawBufferPointer) -> Void) throws(SortSpillError) -> Result {
        let starts = files.map { TraceFileIdentity(fileName: $0)?.started.millisecondsSince1970 ?? .min }
        let order = files.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
        var result = Result()
        var scans = [TraceFileReader.RecordScan?](repeating: nil, count: files.count)
        var pending = PendingLines(memoryLimit: memoryLimit, directory: temporaryDirectory)
        var written = Int64.min
        var spillError: SortSpillError?
        for (position, index) in order.enumerated() {
            let filter = filter
            let scan = TraceFileReader(path: files[index]).forEachRecordLine(header: { _, _ in true }) { record, line, _ in
                guard filter.matches(record) else { return true }
                if record.timestamp < written {
                    result.outOfOrder += 1
                    var copy = [UInt8](line)
                    copy.append(0x0A)
                    copy.withUnsafeBytes(write)
                } else {
                    do throws(SortSpillError) { try pending.add(record.timestamp, line) } catch { spillError = error; return false }
                }
                return true
            }
            if let spillError { throw spillError }
            scans[index] = scan
            // Later files hold nothing before their start less the slack: what lies before is final.
            let horizon = position + 1 < order.count ? starts[order[position + 1]] : Int64.max
            let bound = horizon == .min ? Int64.min : (horizon == .max ? .max : horizon - TraceFileSelection.slack)
            if bound > written {
                try pending.flush(before: bound, to: write)
                written = bound
            }
        }
        result.scans = scans.map { $0! }
        return result
    }
}

/// Lines held back for ordering: their bytes in one arena, sorted only when flushed or spilled;
/// past the memory limit, sorted runs in temporary files, merged with the arena when flushed.
private struct PendingLines {
    private struct Entry { var time: Int64; var sequence: Int; var start: Int; var count: Int }
    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    private var sequence = 0
    private var runs: [SpilledLineRun] = []
    private let memoryLimit: Int
    private let directory: String
    /// Runs merged into one before another is added, so open files stay few.
    private static let maximumRuns = 16

    init(memoryLimit: Int, directory: String) {
        self.memoryLimit = max(memoryLimit, 1)
        self.directory = directory
    }

    mutating func add(_ time: Int64, _ line: UnsafeRawBufferPointer) throws(SortSpillError) {
        // Room for the whole budget at once: growing by doubling would hold up to twice the limit.
        // (Up to 1 GB: memory is only touched as lines arrive, but an address-space limit may refuse more.)
        if arena.capacity == 0 { arena.reserveCapacity(min(memoryLimit, 1 << 30) + (1 << 20)) }
        entries.append(Entry(time: time, sequence: sequence, start: arena.count, count: line.count + 1))
        sequence += 1
        arena.append(contentsOf: line)
        arena.append(0x0A)
        if arena.count + entries.count * MemoryLayout<Entry>.stride >= memoryLimit { try spill() }
    }

    private mutating func sortEntries() {
        entries.sort { ($0.time, $0.sequence) < ($1.time, $1.sequence) }
    }

    /// Writes the arena as a sorted run and empties it.
    private mutating func spill() throws(SortSpillError) {
        if runs.count >= Self.maximumRuns {
            // Merge the runs into one (all their lines: they are all held back still).
            let merged = try SpilledLineRun(directory: directory)
            var batch: [(time: Int64, sequence: Int, bytes: [UInt8])] = []
            var batchBytes = 0
            try merge(memory: 0, before: .max) { time, sequence, bytes throws(SortSpillError) in
                batch.append((time, sequence, [UInt8](bytes)))
                batchBytes += bytes.count
                if batchBytes >= 1 << 20 {
                    try merged.write(batch.lazy.map { item in item.bytes.withUnsafeBytes { (item.time, item.sequence, $0) } })
                    batch.removeAll(keepingCapacity: true)
                    batchBytes = 0
                }
            }
            try merged.write(batch.lazy.map { item in item.bytes.withUnsafeBytes { (item.time, item.sequence, $0) } })
            try merged.startReading()
            runs = [merged]
        }
        sortEntries()
        let run = try SpilledLineRun(directory: directory)
        var failure: SortSpillError?
        arena.withUnsafeBytes { bytes in
            do throws(SortSpillError) {
                try run.write(entries.lazy.map { ($0.time, $0.sequence, UnsafeRawBufferPointer(rebasing: bytes[$0.start..<($0.start + $0.count)])) })
            } catch { failure = error }
        }
        if let failure { throw failure }
        try run.startReading()
        runs.append(run)
        arena.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    /// Hands out, in (time, sequence) order, the first `memory` entries of the sorted arena and the
    /// lines of every run timed before `bound`; runs that end are dropped.
    private mutating func merge(
        memory: Int, before bound: Int64,
        _ emit: (Int64, Int, UnsafeRawBufferPointer) throws(SortSpillError) -> Void
    ) throws(SortSpillError) {
        var next = 0
        while true {
            var best: (time: Int64, sequence: Int, run: Int)?
            if next < memory { best = (entries[next].time, entries[next].sequence, -1) }
            for (i, run) in runs.enumerated() {
                guard let head = run.head, head.time < bound else { continue }
                if best == nil || (head.time, head.sequence) < (best!.time, best!.sequence) { best = (head.time, head.sequence, i) }
            }
            guard let best else { break }
            if best.run < 0 {
                let entry = entries[next]
                var failure: SortSpillError?
                arena.withUnsafeBytes { bytes in
                    do throws(SortSpillError) {
                        try emit(entry.time, entry.sequence, UnsafeRawBufferPointer(rebasing: bytes[entry.start..<(entry.start + entry.count)]))
                    } catch { failure = error }
                }
                if let failure { throw failure }
                next += 1
            } else {
                let run = runs[best.run]
                var failure: SortSpillError?
                run.withHeadBytes { bytes in
                    do throws(SortSpillError) { try emit(best.time, best.sequence, bytes) } catch { failure = error }
                }
                if let failure { throw failure }
                try run.advance()
            }
        }
        runs.removeAll { $0.head == nil }
    }

    /// Writes the lines timed before `bound` in time order and keeps the rest.
    mutating func flush(before bound: Int64, to write: (UnsafeRawBufferPointer) -> Void) throws(SortSpillError) {
        guard !entries.isEmpty || !runs.isEmpty else { return }
        sortEntries()
        let cut = entries.firstIndex { $0.time >= bound } ?? entries.count
        var output: [UInt8] = []
        try merge(memory: cut, before: bound) { _, _, bytes in
            output.append(contentsOf: bytes)
            if output.count >= 256 << 10 {
                output.withUnsafeBytes(write)
                output.removeAll(keepingCapacity: true)
            }
        }
        output.withUnsafeBytes(write)
        guard cut > 0 else { return }
        var keptArena: [UInt8] = []
        var kept: [Entry] = []
        for entry in entries[cut...] {
            kept.append(Entry(time: entry.time, sequence: entry.sequence, start: keptArena.count, count: entry.count))
            keptArena.append(contentsOf: arena[entry.start..<(entry.start + entry.count)])
        }
        arena = keptArena
        entries = kept
    }
}
