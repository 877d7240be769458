import Foundation

/// Lines held back to be written in time order: their bytes in one arena, sorted only when
/// flushed or spilled; past the memory limit, sorted runs in temporary files (``SpilledLineRun``),
/// merged with the arena when flushed. Lines of equal time keep the order they were added in.
///
/// The one external sort of trace lines: `apitrace cat --sort` (``TraceLineMerger``) and the HAR
/// export hold lines in it, so either sorts any amount of lines in bounded memory.
///
/// ```swift
/// var pending = PendingLines(memoryLimit: 16 << 20, directory: PendingLines.defaultTemporaryDirectory)
/// try pending.add(record.timestamp, line)
/// try pending.forEach(before: .max) { time, line in write(line) }
/// ```
package struct PendingLines {
    private struct Entry { var time: Int64; var sequence: Int; var start: Int; var count: Int }
    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    private var sequence = 0
    private var runs: [SpilledLineRun] = []
    private let memoryLimit: Int
    private let directory: String
    /// Runs merged into one before another is added, so open files stay few.
    private static let maximumRuns = 16

    /// Holds lines in up to `memoryLimit` bytes of memory, spilling the rest to `directory`.
    package init(memoryLimit: Int, directory: String) {
        self.memoryLimit = max(memoryLimit, 1)
        self.directory = directory
    }

    /// `TMPDIR`, else `/tmp`.
    package static var defaultTemporaryDirectory: String {
        let dir = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
        return dir.isEmpty ? "/tmp" : (dir.hasSuffix("/") && dir.count > 1 ? String(dir.dropLast()) : dir)
    }

    /// True when no line is held.
    package var isEmpty: Bool { entries.isEmpty && runs.isEmpty }

    /// Holds a line (without its newline) timed `time`.
    package mutating func add(_ time: Int64, _ line: UnsafeRawBufferPointer) throws(SortSpillError) {
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

    /// Writes the lines timed before `bound` in time order, each ended by a newline, in blocks;
    /// keeps the rest.
    package mutating func flush(before bound: Int64, to write: (UnsafeRawBufferPointer) -> Void) throws(SortSpillError) {
        var output: [UInt8] = []
        try forEach(before: bound) { _, line in
            output.append(contentsOf: line)
            output.append(0x0A)
            if output.count >= 256 << 10 {
                output.withUnsafeBytes(write)
                output.removeAll(keepingCapacity: true)
            }
        }
        if !output.isEmpty { output.withUnsafeBytes(write) }
    }

    /// Hands out the lines timed before `bound` one at a time (without the newline; valid only
    /// during the call), in time order, and keeps the rest.
    package mutating func forEach(before bound: Int64, _ body: (Int64, UnsafeRawBufferPointer) -> Void) throws(SortSpillError) {
        guard !entries.isEmpty || !runs.isEmpty else { return }
        sortEntries()
        let cut = entries.firstIndex { $0.time >= bound } ?? entries.count
        try merge(memory: cut, before: bound) { time, _, bytes in
            body(time, UnsafeRawBufferPointer(rebasing: bytes.dropLast()))
        }
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
