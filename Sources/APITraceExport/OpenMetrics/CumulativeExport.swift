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
public struct CumulativeExport: Sendable, Codable {
    /// Version of the state file's layout.
    public static let version = 1

    /// The totals so far.
    public var metrics: OpenMetricsExporter
    /// What was selected (filters) when the state began; a run with another selection must not add to it.
    public private(set) var selection: String
    private var version: Int
    /// Events counted so far per trace file path.
    private var counted: [String: Int]
    /// Size in bytes of each file when its events were counted: a file of the same size holds
    /// nothing new (files only grow), so a periodic run reads only new and growing files.
    private var sizes: [String: UInt64]
    /// Inode of each file when its events were counted: another file renamed in under the same
    /// name (same size or not) starts from its first event. Absent in states from before it was kept.
    private var inodes: [String: UInt64]?
    /// When the totals began, milliseconds since 1970 (the start of OTLP's cumulative points).
    /// Absent in states from before it was kept: the first run that needs it sets it.
    public private(set) var startedMilliseconds: Int64?

    /// Creates an empty state for exports of `selection` (a description of the filters).
    public init(selection: String) {
        self.metrics = OpenMetricsExporter()
        self.selection = selection
        self.version = Self.version
        self.counted = [:]
        self.sizes = [:]
        self.inodes = [:]
        self.startedMilliseconds = TraceTimestamp.now().millisecondsSince1970
    }

    /// Sets ``startedMilliseconds`` when a state from before it was kept has none.
    public mutating func markStartIfMissing() {
        if startedMilliseconds == nil { startedMilliseconds = TraceTimestamp.now().millisecondsSince1970 }
    }

    /// The number of events of `file` already counted (0 for a file not seen before).
    public func countedEvents(in file: String) -> Int { counted[Self.key(file)] ?? 0 }

    /// Files are known by absolute path, so a run from another directory does not count them again.
    private static func key(_ file: String) -> String { URL(fileURLWithPath: file).standardizedFileURL.path }

    /// Records that the first `count` events of `file` are counted; never lowers the mark, so a
    /// file that reads shorter than before (being rewritten) adds nothing twice.
    public mutating func setCountedEvents(_ count: Int, in file: String) {
        counted[Self.key(file)] = max(count, countedEvents(in: file))
    }

    /// Reads `file` and adds its events past those counted before, from files whose header
    /// `keepFile` accepts and that `keepEvent` accepts; returns the reader's result (warnings), or
    /// `nil` when the file was read whole before and has not grown since (it is not read again).
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
    }

    /// Starts reading `file` again: forgets its marks when another file took its name (another
    /// inode); nil when it was read whole before and has not grown since (it need not be read).
    package mutating func startFile(_ file: String) -> FileStart? {
        let key = Self.key(file)
        let status = FileStatus(path: file)
        if let status, let known = inodes?[key], known != status.inode {
            // Another file under this name: none of its events were counted.
            counted[key] = nil
            sizes[key] = nil
        }
        if let status, counted[key] == nil, let from = renamedFrom(status) {
            // The same file under a new name (a rename within the folder): its events were counted under the old one.
            counted[key] = counted.removeValue(forKey: from)
            sizes[key] = sizes.removeValue(forKey: from)
            let inode = inodes?.removeValue(forKey: from)
            inodes?[key] = inode
        }
        let size = status.map { UInt64(max(0, $0.size)) }
        if let size, size == sizes[key] { return nil }
        return FileStart(file: file, skip: countedEvents(in: file), status: status)
    }

    /// The counted path that `status` is the same file as: same inode, at least the size it had
    /// (files only grow), and no longer under its old name. An inode the system reused for a new,
    /// smaller file is not taken for a rename.
    private func renamedFrom(_ status: FileStatus) -> String? {
        guard let inodes else { return nil }
        for (path, inode) in inodes where inode == status.inode {
            guard let size = sizes[path], UInt64(max(0, status.size)) >= size else { continue }
            if FileStatus(path: path)?.inode == inode { continue }
            return path
        }
        return nil
    }

    /// Ends reading a file begun with ``startFile(_:)`` whose events are now all counted (the
    /// caller has set the mark with ``setCountedEvents(_:in:)``): a usable file of the same size
    /// is not read again.
    package mutating func finishFile(_ start: FileStart, usable: Bool) {
        guard usable else { return }
        let key = Self.key(start.file)
        sizes[key] = start.status.map { UInt64(max(0, $0.size)) }
        if let status = start.status { inodes = (inodes ?? [:]).merging([key: status.inode]) { $1 } }
    }

    /// Forgets the marks of files that are gone (their events stay in ``metrics``), keeping the state small.
    public mutating func forgetFiles(notIn present: Set<String>) {
        let present = Set(present.map(Self.key))
        counted = counted.filter { present.contains($0.key) }
        sizes = sizes.filter { present.contains($0.key) }
        inodes = inodes?.filter { present.contains($0.key) }
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
        do { state = try JSONDecoder().decode(CumulativeExport.self, from: data) } catch {
            throw CumulativeExportError(path: path, message: "not an apitrace export state (\(error)); delete it to start over, which Prometheus sees as one counter reset")
        }
        guard state.version == version else {
            throw CumulativeExportError(path: path, message: "export state version \(state.version), this apitrace reads \(version); delete it to start over")
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
