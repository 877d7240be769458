/// The check of a file's first line that every reader makes: an apitrace header of a version this
/// reader knows, or a warning saying why the file is skipped.
package enum HeaderCheck {
    /// The header of a file whose line `line` (1-based, the first non-empty one) is `bytes`.
    package static func check(_ bytes: UnsafeRawBufferPointer, line: Int, path: String) -> Result<TraceFileHeader, TraceReadWarning> {
        guard line == 1, case .header(let header)? = try? TraceLine.decode(bytes) else {
            return .failure(.init(path: path, kind: .notATraceFile("line \(line) is not an apitrace header"), eventsKept: 0))
        }
        guard header.version <= TraceFileHeader.currentVersion else {
            return .failure(.init(path: path, kind: .newerVersion(header.version), eventsKept: 0))
        }
        return .success(header)
    }
}
