/// The check of a file's first line that every reader makes, and the collector before it stores an
/// upload: an apitrace header of a version this build knows, or why the file is refused.
package enum HeaderCheck {
    /// Why a header's `version` is refused; `nil` from ``problem(version:)`` when it is accepted.
    package enum VersionProblem: Sendable, Equatable {
        /// Below 1: versions start at 1, so no apitrace producer wrote this file.
        case beforeFirst(Int)
        /// Newer than ``TraceFileHeader/currentVersion``: a newer apitrace wrote it.
        case newer(Int)

        /// The reason as a phrase (the reader's warning and the collector's 400 say it).
        package var reason: String {
            switch self {
            case .beforeFirst(let version): "header field \"version\" is \(version); versions start at 1"
            case .newer(let version): "the file is format version \(version), newer than this apitrace reads (\(TraceFileHeader.currentVersion))"
            }
        }
    }

    /// The one answer on a header's `version`: accepted from 1 to ``TraceFileHeader/currentVersion``.
    package static func problem(version: Int) -> VersionProblem? {
        if version < 1 { return .beforeFirst(version) }
        if version > TraceFileHeader.currentVersion { return .newer(version) }
        return nil
    }

    /// The header of a file whose line `line` (1-based, the first non-empty one) is `bytes`.
    package static func check(_ bytes: UnsafeRawBufferPointer, line: Int, path: String) -> Result<TraceFileHeader, TraceReadWarning> {
        guard line == 1, case .header(let header)? = try? TraceLine.decode(bytes) else {
            return .failure(.init(path: path, kind: .notATraceFile("line \(line) is not an apitrace header"), eventsKept: 0))
        }
        switch problem(version: header.version) {
        case .newer(let version)?:
            return .failure(.init(path: path, kind: .newerVersion(version), eventsKept: 0))
        case let refused?:
            return .failure(.init(path: path, kind: .notATraceFile(refused.reason), eventsKept: 0))
        case nil:
            return .success(header)
        }
    }
}
