public import APITraceFormat
public import Foundation

/// Turns `request` events into an HTTP Archive (HAR 1.2) that browser devtools and HTTP tools open,
/// in memory: for a few events at hand. `apitrace export --format har` streams any number of
/// trace files in bounded memory instead (``HARStream``); both write entries alike (``HAREntryWriter``).
///
/// Traces hold routes, not URLs, and never headers or bodies, so entries carry what is known:
/// `https://{host}{route}` as the URL (route placeholders percent-encoded), the status, timings
/// (DNS, connect, TLS, waiting and receiving where the event has `TraceEvent.Request.Timing`,
/// otherwise all of it as waiting), the HTTP version from the protocol, body sizes, and apitrace's
/// own fields (`_route`, `_error`, `_attempt`, `_traceId`, `_session`, `_reusedConnection`).
/// A transport failure becomes status 0 with the error identity as its status text, as browsers do.
///
/// ```swift
/// var har = HARExporter()
/// TraceFileReader(path: file).forEachEvent { har.add($0) }
/// let data = har.archive()
/// ```
public struct HARExporter {
    /// Only events of this session are kept, when set: a pattern in the one grammar of every
    /// command's `--session` (`*` matches any run of characters; without one, exactly).
    public var session: String? { didSet { sessionPattern = session.map(TextPattern.init) } }
    private var sessionPattern: TextPattern?
    private var entries: [(started: Int64, bytes: [UInt8])] = []

    /// Creates an exporter, optionally keeping one session only.
    public init(session: String? = nil) {
        self.session = session
        sessionPattern = session.map(TextPattern.init)
    }

    /// Number of entries added so far.
    public var count: Int { entries.count }

    /// Adds the event when it is a request (of the chosen session); other events are ignored.
    public mutating func add(_ event: TraceEvent) {
        guard case .request = event.payload else { return }
        guard TextPattern.admits(sessionPattern, event.session) else { return }
        // Through its line, so an event is read exactly as the same event in a file.
        var line = JSONOutput()
        event.encode(to: &line)
        var scanner = TraceRecordScanner()
        let scanned = line.bytes.withUnsafeBytes { scanner.scan($0) }
        guard scanned == .event else { return }
        var entry = JSONOutput()
        HAREntryWriter.append(scanner.record, to: &entry)
        entries.append((HAREntryWriter.started(scanner.record), entry.bytes))
    }

    /// The archive as JSON, entries sorted by start time (ties in the order they were added).
    public func archive(creatorVersion: String = "0.1.0") -> Data {
        var out = JSONOutput()
        HAREntryWriter.head(creatorVersion: creatorVersion, to: &out)
        let order = entries.indices.sorted { (entries[$0].started, $0) < (entries[$1].started, $1) }
        for (n, i) in order.enumerated() {
            if n > 0 { out.bytes.append(contentsOf: ",\n".utf8) }
            out.bytes.append(contentsOf: entries[i].bytes)
        }
        HAREntryWriter.tail(to: &out)
        return Data(out.bytes)
    }
}
