import APITraceFormat

/// Merges the valid event lines of several trace files into one stream in time order (`apitrace cat --sort`),
/// each line passed on as it is in its file.
///
/// Files are read in the order their names start (files whose names carry no start are read
/// first), and a line is held back only until no file still to be read can hold an earlier event.
/// That bound is the rule file pruning stands on (``TraceFileSelection``): a file holds no events
/// from more than ``TraceFileSelection/slack`` before its name's start. So memory holds the events
/// of the files that overlap in time, not of the folder. Lines of equal time keep file order, then
/// line order. A line that breaks the rule (earlier than lines already written) is written at once
/// and counted in ``Result/outOfOrder``.
package struct TraceLineMerger: Sendable {
    /// Lines printed.
    package var filter: TraceLineFilter

    package init(filter: TraceLineFilter) { self.filter = filter }

    /// What merging met.
    package struct Result: Sendable {
        /// Each file's scan, in the order the files were given.
        package var scans: [TraceFileReader.RecordScan] = []
        /// Lines that came too late to be written in time order.
        package var outOfOrder = 0
    }

    /// Merges the lines of `files` into `write`, in time order.
    package func merge(_ files: [String], to write: (UnsafeRawBufferPointer) -> Void) -> Result {
        let starts = files.map { TraceFileName(fileName: $0)?.started.millisecondsSince1970 ?? .min }
        let order = files.indices.sorted { (starts[$0], $0) < (starts[$1], $1) }
        var result = Result()
        var scans = [TraceFileReader.RecordScan?](repeating: nil, count: files.count)
        var pending = PendingLines()
        var written = Int64.min
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
                    pending.add(record.timestamp, line)
                }
                return true
            }
            scans[index] = scan
            // Later files hold nothing before their start less the slack: what lies before is final.
            let horizon = position + 1 < order.count ? starts[order[position + 1]] : Int64.max
            let bound = horizon == .min ? Int64.min : (horizon == .max ? .max : horizon - TraceFileSelection.slack)
            if bound > written {
                pending.flush(before: bound, to: write)
                written = bound
            }
        }
        result.scans = scans.map { $0! }
        return result
    }
}

/// Lines held back for ordering: their bytes in one arena, sorted only when flushed.
private struct PendingLines {
    private var arena: [UInt8] = []
    private var entries: [(time: Int64, sequence: Int, start: Int, count: Int)] = []
    private var sequence = 0

    mutating func add(_ time: Int64, _ line: UnsafeRawBufferPointer) {
        entries.append((time, sequence, arena.count, line.count + 1))
        sequence += 1
        arena.append(contentsOf: line)
        arena.append(0x0A)
    }

    /// Writes the lines timed before `bound` in time order and keeps the rest.
    mutating func flush(before bound: Int64, to write: (UnsafeRawBufferPointer) -> Void) {
        guard !entries.isEmpty else { return }
        entries.sort { ($0.time, $0.sequence) < ($1.time, $1.sequence) }
        let cut = entries.firstIndex { $0.time >= bound } ?? entries.count
        guard cut > 0 else { return }
        var output: [UInt8] = []
        arena.withUnsafeBytes { bytes in
            for entry in entries[..<cut] {
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[entry.start..<(entry.start + entry.count)]))
                if output.count >= 256 << 10 {
                    output.withUnsafeBytes(write)
                    output.removeAll(keepingCapacity: true)
                }
            }
        }
        output.withUnsafeBytes(write)
        var keptArena: [UInt8] = []
        var kept: [(time: Int64, sequence: Int, start: Int, count: Int)] = []
        for entry in entries[cut...] {
            kept.append((entry.time, entry.sequence, keptArena.count, entry.count))
            keptArena.append(contentsOf: arena[entry.start..<(entry.start + entry.count)])
        }
        arena = keptArena
        entries = kept
    }
}
