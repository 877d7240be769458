public import APITraceFormat
import Foundation

/// Metrics of a trace folder kept between periodic exports, so every counter only grows.
///
/// Exporting a folder from scratch each minute makes totals fall whenever the writer's budget or
/// the uploader deletes files; Prometheus reads a fall as a counter reset and counts the whole new
/// value as an increase, so `rate()` would spike at every deletion. A cumulative export instead
/// remembers, per file, how many events it has counted: each run adds only the events past that
/// point (a trace file only grows) and a deleted file's events stay in the totals. Losing the state
/// file is one ordinary counter reset.
///
/// ```swift
/// var export = try CumulativeExport.load(path: "export-state.json", selection: "all")
/// for file in files { _ = export.add(file: file) }
/// export.forgetFiles(notIn: Set(files))
/// try export.save(path: "export-state.json")
/// print(export.metrics.text())
/// ```
///
/// Events are counted when an export first sees them, not at their own time: a file uploaded
/// late adds its events at that scrape.
///
/// A file is known by its absolute path, its inode and a fingerprint of its content: its size and
/// hashes of its first and last 4 KiB (``AppendedPrefix``, as the alert's cache knows a
/// collector's open file). A file of the same size and fingerprint holds nothing new and is not
/// read, whatever its modification time (a `touch`, a copy that keeps the bytes): the state is
/// what was exported, and a file taken for new would be exported twice. A file rewritten in place
/// at the same size, or another file renamed in under the name (another inode), is a new file and
/// counted from its first event.
public struct CumulativeExport: Sendable, Codable {
    /// Version of the state file's layout. 2: one record per file with its fingerprint; version 1
    /// states (events, sizes and inodes in three maps) are read and written as version 2.
    public static let version = 2

    /// The totals so far.
    public var metrics: OpenMetricsExporter
    /// What was selected (filters) when the state began; a run with another selection must not add to it.
    public private(set) var selection: String
    /// What is known of each trace file, by absolute path.
    private var files: [String: FileMark]
    /// When the totals began, milliseconds since 1970 (the start of OTLP's cumulative points).
    /// Absent in states from before it was kept: the first run that needs it sets it.
    public private(set) var startedMilliseconds: Int64?

    /// What the state knows of one file.
    struct FileMark: Sendable, Codable, Equatable {
        /// Events of the file counted so far.
        var events = 0
        /// Size in bytes when its events were all counted: a file of the same size and fingerprint
        /// holds nothing new (files only grow), so a periodic run reads only new and growing files.
        var size: UInt64?
        /// Inode when its events were counted: another file renamed in under the same name (same
        /// size or not) starts from its first event.
        var inode: UInt64?
        /// Hashes of the first and last 4 KiB of the file's first ``size`` bytes, as 16 hex digits
        /// each (`head-tail`); absent for files first counted by a version 1 state.
        var fingerprint: String?

        static func fingerprint(_ prefix: AppendedPrefix) -> String { hex(prefix.headHash) + "-" + hex(prefix.tailHash) }
        private static func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
    }

    /// Creates an empty state for exports of `selection` (a description of the filters).
    public init(selection: String) {
        self.metrics = OpenMetricsExporter()
        self.selection = selection
        self.files = [:]
        self.startedMilliseconds = TraceTimestamp.now().millisecondsSince1970
    }

    /// Sets ``startedMilliseconds`` when a state from before it was kept has none.
    public mutating func markStartIfMissing() {
        if startedMilliseconds == nil { startedMilliseconds = TraceTimestamp.now().millisecondsSince1970 }
    }

    /// The number of events of `file` already counted (0 for a file not seen before).
    public func countedEvents(in file: String) -> Int { files[Self.key(file)]?.events ?? 0 }

    /// Files are known by absolute path, so a run from another directory does not count them again.
    private static func key(_ file: String) -> String { URL(fileURLWithPath: file).standardizedFileURL.path }

    /// Records that the first `count` events of `file` are counted; never lowers the mark, so a
    /// file that reads shorter than before (being rewritten) adds nothing twice.
    public mutating func setCountedEvents(_ count: Int, in file: String) {
        files[Self.key(file), default: FileMark()].events = max(count, countedEvents(in: file))
    }

    /// Reads `file` and adds its events past those counted before, from files whose header
    /// `keepFile` accepts and that `keepEvent` accepts; returns the reader's result (warnings), or
    /// `nil` when the file was read whole before and has not changed since (it is not read again).
    @discardableResult
    public mutating func add(
        file: String, keepFile: (TraceFileHeader) -> Bool = { _ in true }, keepEvent: (TraceEvent) -> Bool = { _ in true }
    ) -> TraceFileReader.Result? {
        guard let start = startFile(file) else { return nil }
        var keep = true
        var appVersion: String?
        var index = 0
        let result = TraceFileReader(path: file).forEachLine { line, _ in
            switch line {
            case .header(let header):
                keep = keepFile(header)
                appVersion = header.appVersion
            case .event(let event):
                // Events are counted by position: a trace file only grows, so the first `skip` are the ones seen before.
                defer { index += 1 }
                if index >= start.skip, keep, keepEvent(event) { metrics.add(event, appVersion: appVersion) }
            default: break
            }
        }
        setCountedEvents(index, in: file)
        finishFile(start, usable: result.isUsable)
        return result
    }

    /// Where reading a file resumes: the events counted before, and the file's status when reading began.
    package struct FileStart {
        package var file: String
        /// Events of the file counted before: reading adds those from this position on.
        package var skip: Int
        var status: FileStatus?
        /// The fingerprint of the file's bytes up to its size when reading began.
        var fingerprint: String?
    }

    /// Starts reading `file` again: forgets its marks when another file took its name (another
    /// inode, or the same size with other bytes); nil when it was read whole before and has not
    /// changed since (it need not be read).
    package mutating func startFile(_ file: String) -> FileStart? {
        let key = Self.key(file)
        let status = FileStatus(path: file)
        let size = status.map { UInt64(max(0, $0.size)) }
        let fingerprint = status.flatMap { AppendedPrefix(path: file, offset: $0.size) }.map(FileMark.fingerprint)
        if let status, let known = files[key]?.inode, known != status.inode {
            // Another file under this name: none of its events were counted.
            files[key] = nil
        }
        if let status, files[key] == nil, let from = renamedFrom(status) {
            // The same file under a new name (a rename within the folder): its events were counted under the old one.
            files[key] = files.removeValue(forKey: from)
        }
        if let size, let mark = files[key], mark.size == size {
            if mark.fingerprint == fingerprint || size == 0 { return nil }
            if mark.fingerprint == nil {
                // Counted by a version 1 state, which kept no fingerprint: the file is taken as
                // counted (as that state did), and known by its bytes from now on.
                files[key]?.fingerprint = fingerprint
                return nil
            }
            // Rewritten in place at the same size: another file, none of whose events were counted.
            files[key] = nil
        }
        return FileStart(file: file, skip: countedEvents(in: file), status: status, fingerprint: fingerprint)
    }

    /// The counted path that `status` is the same file as: same inode, at least the size it had
    /// (files only grow), the same bytes up to that size, and no longer under its old name. An
    /// inode the system reused for a new file is not taken for a rename.
    private func renamedFrom(_ status: FileStatus) -> String? {
        for (path, mark) in files where mark.inode == status.inode {
            guard let size = mark.size, UInt64(max(0, status.size)) >= size else { continue }
            if FileStatus(path: path)?.inode == status.inode { continue }
            return path
        }
        return nil
    }

    /// Ends reading a file begun with ``startFile(_:)`` whose events are now all counted (the
    /// caller has set the mark with ``setCountedEvents(_:in:)``): a usable file of the same size
    /// and bytes is not read again.
    package mutating func finishFile(_ start: FileStart, usable: Bool) {
        guard usable else { return }
        let key = Self.key(start.file)
        files[key, default: FileMark()].size = start.status.map { UInt64(max(0, $0.size)) }
        files[key]?.inode = start.status?.inode
        files[key]?.fingerprint = start.fingerprint
    }

    /// Forgets the marks of files that are gone (their events stay in ``metrics``), keeping the state small.
    public mutating func forgetFiles(notIn present: Set<String>) {
        let present = Set(present.map(Self.key))
        files = files.filter { present.contains($0.key) }
    }

    // MARK: - State file

    private enum CodingKeys: String, CodingKey {
        case metrics, selection, version, files, startedMilliseconds
        // Version 1.
        case counted, sizes, inodes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard version == 1 || version == Self.version else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: container, debugDescription: "export state version \(version), this apitrace reads 1 and \(Self.version); delete it to start over")
        }
        metrics = try container.decode(OpenMetricsExporter.self, forKey: .metrics)
        selection = try container.decode(String.self, forKey: .selection)
        startedMilliseconds = try container.decodeIfPresent(Int64.self, forKey: .startedMilliseconds)
        if version == Self.version {
            files = try container.decode([String: FileMark].self, forKey: .files)
        } else {
            let counted = try container.decode([String: Int].self, forKey: .counted)
            let sizes = try container.decode([String: UInt64].self, forKey: .sizes)
            let inodes = try container.decodeIfPresent([String: UInt64].self, forKey: .inodes) ?? [:]
            files = [:]
            for key in Set(counted.keys).union(sizes.keys).union(inodes.keys) {
                files[key] = FileMark(events: counted[key] ?? 0, size: sizes[key], inode: inodes[key])
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.version, forKey: .version)
        try container.encode(metrics, forKey: .metrics)
        try container.encode(selection, forKey: .selection)
        try container.encode(files, forKey: .files)
        try container.encodeIfPresent(startedMilliseconds, forKey: .startedMilliseconds)
    }

    /// Reads the state at `path`, or starts a new one when there is no file there.
    ///
    /// - Throws: ``CumulativeExportError`` when the file cannot be read, is not a state file, or
    ///   was made for another selection.
    public static func load(path: String, selection: String) throws(CumulativeExportError) -> CumulativeExport {
        let data: Data
        switch RegularFile.read(path, limit: maximumBytes) {
        case .success(nil): return CumulativeExport(selection: selection)
        case .success(let bytes?): data = Data(bytes)
        case .failure(let refusal): throw CumulativeExportError(path: path, message: "cannot read the export state: \(refusal.reason)")
        }
        let state: CumulativeExport
        do { state = try JSONDecoder().decode(CumulativeExport.self, from: data) } catch let DecodingError.dataCorrupted(context) where context.codingPath.last?.stringValue == "version" {
            throw CumulativeExportError(path: path, message: context.debugDescription)
        } catch {
            throw CumulativeExportError(path: path, message: "not an apitrace export state (\(error)); delete it to start over, which Prometheus sees as one counter reset")
        }
        guard state.selection == selection else {
            throw CumulativeExportError(path: path, message: "the state counts \(state.selection), this run selects \(selection); use another --state file per selection")
        }
        return state
    }

    /// Writes the state atomically to `path`.
    public func save(path: String) throws(CumulativeExportError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try AtomicFileWriter.write(encoder.encode(self), to: path)
        } catch let error as AtomicFileWriter.Failure {
            throw CumulativeExportError(path: path, message: "cannot write the export state: \(error.reason)")
        } catch {
            throw CumulativeExportError(path: path, message: "cannot write the export state: \(error)")
        }
    }

    /// The largest export state read (one entry per trace file).
    static let maximumBytes = 256 << 20
}

/// A state file of ``CumulativeExport`` that cannot be used, naming the file and what to do.
public struct CumulativeExportError: Error, Sendable, CustomStringConvertible {
    /// The state file.
    public var path: String
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
