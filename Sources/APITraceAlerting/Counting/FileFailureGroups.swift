import APITraceFormat

/// What a finished trace file holds for a ``AlertRule/NewFailureDetection``'s baseline: the
/// failure groups it saw (decode-failure groups and error identities, in first-seen order), with
/// their event counts and last times, and the span of all its events.
///
/// A `new_failures` rule reads a week of baseline at every cron run; a file whose events all lie
/// in the baseline is judged from this summary, kept in the ``FileCountCache``, so only the
/// window's files are read again.
struct FileFailureGroups: Equatable, Sendable {
    /// One failure group of the file.
    struct Group: Equatable, Sendable {
        var key: String
        var isDecodeFailure: Bool
        var count: Int64
        var last: Int64
    }

    /// The header's app version ("" when absent).
    var appVersion = ""
    /// Earliest and latest timestamps of any event in the file (`first > last` when it has none).
    var first: Int64 = .max
    var last: Int64 = .min
    var groups: [Group] = []

    /// Whether every event of the file lies in `range`.
    func lies(in range: Range<Int64>) -> Bool {
        first > last || (range.contains(first) && range.contains(last))
    }

    /// The group key of a failure record of the file, or nil for other records.
    static func key(of record: TraceRecord) -> (key: String, isDecodeFailure: Bool)? {
        switch record.kind {
        case .decodeFailure:
            let path = TraceEvent.DecodeFailure.foldIndices(record.path?.string ?? "")
            return ("\(record.entity!.string) \(record.failureKind!.string) \(path)", true)
        case .error:
            return (record.identity!.string, false)
        default:
            return nil
        }
    }

    /// Reads a whole file into its summary (failures outside `route` left out); nil when the file
    /// has reading problems (its warnings must be said at every run) or more groups than `maximumGroups`.
    static func read(_ reader: TraceFileReader, route: TextPattern?, maximumGroups: Int) -> FileFailureGroups? {
        var summary = FileFailureGroups()
        var index: [String: Int] = [:]
        var tooMany = false
        let scan = reader.forEachRecord(header: { header in
            summary.appVersion = header.appVersion ?? ""
            return true
        }) { r, _ in
            summary.first = min(summary.first, r.timestamp)
            summary.last = max(summary.last, r.timestamp)
            guard let (key, isDecodeFailure) = key(of: r) else { return true }
            if let route, !(r.route.map { route.matches($0.string) } ?? false) { return true }
            if let i = index[key] {
                summary.groups[i].count += 1
                summary.groups[i].last = max(summary.groups[i].last, r.timestamp)
            } else {
                guard summary.groups.count < maximumGroups else { tooMany = true; return false }
                index[key] = summary.groups.count
                summary.groups.append(Group(key: key, isDecodeFailure: isDecodeFailure, count: 1, last: r.timestamp))
            }
            return true
        }
        return scan.warnings.isEmpty && !tooMany ? summary : nil
    }
}
