/// A problem met while reading a trace file. Reading goes on where it can: the events before the
/// problem are kept, and other files are unaffected.
public struct TraceReadWarning: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The file could not be opened or read.
        case unreadable(String)
        /// The file holds no apitrace header line: not a trace file.
        case notATraceFile(String)
        /// The file was written by a newer format version than this reader understands; it was skipped.
        case newerVersion(Int)
        /// The compressed data ends inside a gzip member (a writer that was killed, or a cut copy).
        case truncated(byteOffset: Int)
        /// The compressed data is damaged from this offset on.
        case corrupt(byteOffset: Int, detail: String)
        /// A line that is not a valid trace line; it was skipped.
        case invalidLine(line: Int, reason: String)
        /// The file ends in the middle of a line; that partial line was discarded.
        case partialLastLine(line: Int)
        /// A line longer than the reader's limit; it was skipped up to its newline.
        case lineTooLong(line: Int, byteOffset: Int, limit: Int)
        /// Lines whose `sample_rate` was not honoured (on a failure, or outside 0.0001...1); each was counted once.
        case sampleRateIgnored(line: Int, count: Int)
        /// More warnings of this file than are listed; this many were left out.
        case warningsOmitted(Int)
        /// A reader's bound was reached and what lies past it was counted apart; the text says what.
        case limitReached(String)
    }

    /// The file the warning is about.
    public var path: String
    /// What went wrong.
    public var kind: Kind
    /// Events read from the file in all (kept despite the problem).
    public var eventsKept: Int

    public init(path: String, kind: Kind, eventsKept: Int) {
        self.path = path
        self.kind = kind
        self.eventsKept = eventsKept
    }

    /// The warning as one line of text; text from the file (or its name) is escaped for a terminal.
    public var description: String { TextEscaping.terminal(rawDescription) }

    private var rawDescription: String {
        // A name that is not UTF-8 shows its raw bytes as `\xE9`.
        let path = FileSystemPath.display(self.path)
        let kept = "kept \(eventsKept) event\(eventsKept == 1 ? "" : "s")"
        switch kind {
        case .unreadable(let reason):
            return "cannot read \(path): \(reason)"
        case .notATraceFile(let reason):
            return "skipped \(path): not an apitrace trace file (\(reason))"
        case .newerVersion(let version):
            return "skipped \(path): written by trace format version \(version); this apitrace reads version \(TraceFileHeader.currentVersion), upgrade it to read this file"
        case .truncated(let offset):
            return "\(path): truncated at byte \(offset), the writer did not finish it (\(kept))"
        case .corrupt(let offset, let detail):
            return "\(path): corrupt from byte \(offset): \(detail) (\(kept) before the damage)"
        case .invalidLine(let line, let reason):
            return "\(path):\(line): skipped invalid line: \(reason)"
        case .partialLastLine(let line):
            return "\(path):\(line): discarded a partial last line (\(kept))"
        case .lineTooLong(let line, let offset, let limit):
            return "\(path):\(line): skipped a line longer than \(limit) bytes at byte \(offset) of the decompressed text"
        case .sampleRateIgnored(let line, let count):
            return "\(path):\(line): sample_rate ignored on \(count) line\(count == 1 ? "" : "s") from here on (only successful requests are sampled, with rates from \(RequestWeight.minimumSampleRate) to 1); each counted once"
        case .limitReached(let detail):
            return "\(path): \(detail)"
        case .warningsOmitted(let count):
            return "\(path): \(count) more warning\(count == 1 ? "" : "s") of this file not listed"
        }
    }
}
