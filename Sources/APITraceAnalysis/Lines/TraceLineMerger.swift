package import APITraceFormat
import Foundation

/// Merges the valid event lines of several trace files into one stream in time order (`apitrace cat --sort`),
/// each line passed on as it is in its file.
///
/// Files are read in the order their names start (files whose names carry no start are read
/// first), and a line is held back only until no file still to be read can hold an earlier event.
/// That bound is the rule file pruning stands on (``TraceFileSelection``): a file holds no events
/// from more than ``TraceFileSelection/slack`` before its name's start. Lines held back take at most
/// ``memoryLimit`` bytes of memory (``PendingLines``): past it they are sorted and spilled as a run to a temporary file,
/// and runs are merged as they are written, so a single large file, or many
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
    package static var defaultTemporaryDirectory: String { PendingLines.defaultTemporaryDirectory }

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
