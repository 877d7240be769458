package import APITraceFormat

extension OpenMetricsExporter {
    /// Counts one validated line of the reading layer (``TraceFileReader/forEachRecord(header:_:)``)
    /// of a file whose header names `appVersion`: the same series as ``add(_:appVersion:)``, with the
    /// record's own outcome and weight.
    package mutating func add(_ record: TraceRecord, appVersion: String) {
        switch record.kind {
        case .request:
            addRequest(
                method: record.method?.string ?? "", route: record.route?.string ?? "", host: record.host?.string ?? "",
                status: record.status, durationMs: record.durationMs ?? 0, error: record.error?.string,
                outcome: record.outcome, weight: record.weight, appVersion: appVersion)
        case .decodeFailure:
            addDecodeFailure(
                entity: record.entity?.string ?? "", kind: record.failureKind?.string ?? "",
                pathPattern: TraceEvent.DecodeFailure.foldIndices(record.path?.string ?? ""),
                route: record.route?.string ?? "", appVersion: appVersion)
        case .error:
            addError(identity: record.identity?.string ?? "", count: Int(clamping: (record.suppressed ?? 0).addingSaturated(1)))
        case .sse:
            addSSE(phase: record.phase?.string ?? "", route: record.route?.string ?? "", reason: record.reason?.string ?? "")
        case .dropped:
            addDropped(count: Int(clamping: record.count ?? 0), reason: record.reason?.string ?? "")
        case .websocket:
            addWebSocket(phase: record.phase?.string ?? "", route: record.route?.string ?? "", code: record.code.map { Int($0) })
        case .log:
            break
        }
    }
}
