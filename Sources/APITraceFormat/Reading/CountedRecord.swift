/// The facts of one event line that counting reads (the collector's ingest tally, the exported
/// metrics): a few hundred bytes handed from line to line instead of a whole ``TraceRecord``.
///
/// Text fields are ``RawText`` slices of the line, valid only during the callback that hands the
/// value out, as in ``TraceRecord``, whose meaning each field keeps.
package struct CountedRecord {
    package var kind: TraceRecord.Kind = .log
    package var method: RawText?
    package var route: RawText?
    package var host: RawText?
    package var status: Int?
    package var durationMs: Double?
    package var error: RawText?
    /// The request's outcome (requests only).
    package var outcome: RequestOutcome = .success
    /// Requests this line stands for (``RequestWeight``); 1 for other types.
    package var weight: Double = 1
    /// True when the line's `sample_rate` was not honoured.
    package var ignoredSampleRate = false
    package var entity: RawText?
    /// `kind` of a decode failure.
    package var failureKind: RawText?
    package var path: RawText?
    package var identity: RawText?
    package var suppressed: Int64?
    package var phase: RawText?
    package var reason: RawText?
    package var code: Int64?
    package var count: Int64?

    package init() {}

    /// The counted fields of a record read in full.
    @inline(__always)
    package init(_ r: TraceRecord) {
        kind = r.kind
        method = r.method
        route = r.route
        host = r.host
        status = r.status
        durationMs = r.durationMs
        error = r.error
        outcome = r.outcome
        weight = r.weight
        ignoredSampleRate = r.ignoredSampleRate
        entity = r.entity
        failureKind = r.failureKind
        path = r.path
        identity = r.identity
        suppressed = r.suppressed
        phase = r.phase
        reason = r.reason
        code = r.code
        count = r.count
    }
}
