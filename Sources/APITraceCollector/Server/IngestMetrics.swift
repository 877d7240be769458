import APITraceExport
import APITraceFormat

/// The events of every file the collector stores, counted once when it is stored, served on
/// `/metrics` under the names of `apitrace export --format prometheus` (``OpenMetricsExporter``), so
/// the Grafana dashboard and the rules of `apitrace rules --format prometheus` read either.
///
/// Written by hand rather than on swift-metrics and swift-prometheus (2.x): their histograms take
/// one observation at a time with an integer count, so a sampled success standing for
/// `1 / sample_rate` requests (``RequestWeight``, 2.5 for a rate of 0.4) could not weigh the same in
/// the histogram as in the request counter, and they have no bound on label values; the exporter
/// does both, and sharing it keeps one definition of every series for the export and the collector.
///
/// - A file is counted only when it is stored for the first time: a re-sent file (the same content,
///   so the same name) is answered "already stored" and adds nothing; a refused one adds nothing.
/// - Each upload is counted in the one pass that checks it (``UploadValidator``: one inflate, each
///   line scanned once by the reading layer's rules, ``TraceRecordStream``) outside the lock, into
///   a tally grouped by series (strings made once per series, not per line), then added in once it
///   is stored: uploads on several store threads only wait for each other while adding.
/// - Counters only grow. With an ``IngestCountLog`` (an instance id) they also survive a restart,
///   a crash or a SIGKILL: each stored upload is logged before its journal line and confirmed
///   while its counts are added, and a restart loads the last snapshot and counts the uploads
///   confirmed since again from the store. Without one, a restart is an ordinary Prometheus reset.
/// - A series appears at 0 in the first scrape that shows it and with its count from the next one
///   on, so Prometheus' `increase()` sees its first events (see ``OpenMetricsExporter/text(endOfFile:announcing:)``).
final class IngestMetrics: Sendable {
    private struct State {
        var metrics: OpenMetricsExporter
        var announced: Set<String>? = []
        var files = 0
        var events = 0
        var invalidLines = 0
        var unreadable = 0
    }

    private let limits: OpenMetricsExporter.Limits
    private let state: Locked<State>
    /// Where the counts are kept across restarts; nil: for the life of the process only.
    let log: IngestCountLog?
    /// Segments added since the last snapshot of the log.
    private let sinceSnapshot = Locked(0)

    init(limits: OpenMetricsExporter.Limits, log: IngestCountLog? = nil) {
        self.limits = limits
        self.log = log
        state = Locked(State(metrics: OpenMetricsExporter(limits: limits)))
    }

    /// Adds the counts of an upload just stored (from the pass that checked it), confirming its log
    /// entry `seq` in the same critical section. Thread-safe; the lock is held while adding (and
    /// appending the confirmation, a write to the page cache), never while reading.
    func add(_ upload: IngestTally, confirming seq: Int? = nil) {
        let snapshot = state.withLock { state -> IngestCountLog.Snapshot? in
            Self.add(upload, to: &state)
            guard let log else { return nil }
            if let seq { log.confirm(seq) }
            let due = sinceSnapshot.withLock { n -> Bool in
                n += 1
                if n < IngestCountLog.snapshotEvery { return false }
                n = 0
                return true
            }
            guard due, let covered = log.rotate() else { return nil }
            return Self.snapshot(of: state, generation: covered)
        }
        // Encoded and written outside the lock: the state was copied (copy on write) with the log cut at that point.
        if let snapshot { log?.save(snapshot) }
    }

    /// Adds an upload counted again from the store at start (``IngestCountLog/recover()``); nothing is logged.
    func addRecounted(_ upload: IngestTally) {
        state.withLock { Self.add(upload, to: &$0) }
    }

    private static func add(_ upload: IngestTally, to state: inout State) {
        let (tally, scan) = upload.counted
        guard scan.header != nil else { state.unreadable += 1; return }
        state.metrics.add(tally)
        state.files += 1
        state.events += scan.events
        state.invalidLines += scan.invalidLines
    }

    private static func snapshot(of state: State, generation: Int) -> IngestCountLog.Snapshot {
        IngestCountLog.Snapshot(
            generation: generation, nextSeq: 0, metrics: state.metrics, files: state.files, events: state.events,
            invalidLines: state.invalidLines, unreadable: state.unreadable, announced: Array(state.announced ?? []))
    }

    /// Starts from what the log kept: the snapshot's counters and the series Prometheus was shown.
    func restore(_ snapshot: IngestCountLog.Snapshot?, announced: [String]) {
        state.withLock { state in
            if let snapshot {
                state.metrics = snapshot.metrics
                state.metrics.limits = limits
                state.files = snapshot.files
                state.events = snapshot.events
                state.invalidLines = snapshot.invalidLines
                state.unreadable = snapshot.unreadable
                state.announced = Set(snapshot.announced)
            }
            state.announced?.formUnion(announced)
        }
    }

    /// The current counters as a snapshot covering `generation` (for the log's first snapshot at start).
    func snapshot(generation: Int) -> IngestCountLog.Snapshot {
        state.withLock { Self.snapshot(of: $0, generation: generation) }
    }

    /// A tally for one upload, bounded by these metrics' limits.
    func tally() -> IngestTally { IngestTally(limits: limits) }

    /// The families of the counted events, then the collector's own ingest counters; no `# EOF`.
    func text() -> String {
        state.withLock { state in
            let before = state.announced ?? []
            var text = state.metrics.text(endOfFile: false, announcing: &state.announced)
            if let log, let announced = state.announced, announced.count > before.count {
                log.announce(Array(announced.subtracting(before)))
            }
            text += """
            # TYPE apitrace_collector_files_counted counter
            # HELP apitrace_collector_files_counted Stored trace files whose events were added to the metrics.
            apitrace_collector_files_counted_total \(state.files)
            # TYPE apitrace_collector_events_counted counter
            # HELP apitrace_collector_events_counted Event lines of stored files added to the metrics.
            apitrace_collector_events_counted_total \(state.events)
            # TYPE apitrace_collector_invalid_lines counter
            # HELP apitrace_collector_invalid_lines Lines of stored files skipped as invalid (not counted).
            apitrace_collector_invalid_lines_total \(state.invalidLines)
            # TYPE apitrace_collector_files_uncounted counter
            # HELP apitrace_collector_files_uncounted Stored files that could not be read back to count their events.
            apitrace_collector_files_uncounted_total \(state.unreadable)

            """
            return text
        }
    }
}
