public import APITraceFormat

extension TraceAggregator {
    /// Counts one decoded event, if it matches the filter.
    ///
    /// This is the path for events already in memory (a live tail, tests); files go through the
    /// faster ``add(line:)``. Both count the same way.
    public mutating func add(_ event: TraceEvent) {
        let ms = event.timestamp.millisecondsSince1970
        guard filter.matches(event) else {
            base.eventsFiltered += 1
            return
        }
        let session = event.session.map { SessionCount.hash($0) }
        switch event.payload {
        case .request(let r):
            let requestError = r.error.map { requestIdentities.id(of: $0) }
            let outcome = r.outcome
            recordRequest(
                ms: ms, method: methods.id(of: r.method), route: routeNames.id(of: r.route), outcome: outcome,
                weight: RequestWeight.of(outcome: outcome, sampleRate: r.sampleRate).weight,
                durationMs: r.durationMs, bytesIn: r.bytesIn, bytesOut: r.bytesOut, requestError: requestError, session: session)
        case .decodeFailure(let d):
            let group = decodeGroups.id(of: d.entity + "\u{0}" + d.kind.rawValue + "\u{0}" + TraceEvent.DecodeFailure.foldIndices(d.path))
            recordDecodeFailure(
                ms: ms, group: group, route: d.route.map { routeNames.id(of: $0) }, entity: { d.entity },
                kind: { d.kind.rawValue }, path: { d.path }, key: { d.key }, message: { d.message }, session: session)
        case .error(let e):
            recordError(
                ms: ms, identity: recordedIdentities.id(of: e.identity), route: e.route.map { routeNames.id(of: $0) },
                suppressed: max(0, e.suppressed ?? 0), session: session, message: { e.message })
        case .sse(let s):
            let phase: SSEPhase = switch s.phase {
            case .open: .open
            case .close: .close
            case .reconnect: .reconnect
            case .fail: .fail
            default: .other
            }
            recordSSE(
                ms: ms, phase: phase, route: routeNames.id(of: s.route), reason: s.reason.map { smallStrings.id(of: $0) },
                delayMs: s.delayMs, events: s.events, durationMs: s.durationMs)
        case .log(let l):
            recordLog(ms: ms, level: smallStrings.id(of: l.level))
        case .dropped(let d):
            recordDropped(ms: ms, count: d.count, reason: d.reason)
        case .websocket(let w):
            let phase: SSEPhase = switch w.phase {
            case .open: .open
            case .close: .close
            case .reconnect: .reconnect
            case .fail: .fail
            default: .other
            }
            recordWebSocket(ms: ms, WebSocketFacts(
                phase: phase, route: routeNames.id(of: w.route), code: w.code, reason: w.reason.map { smallStrings.id(of: $0) },
                delayMs: w.delayMs, durationMs: w.durationMs, messagesIn: w.messagesIn.map { Int64($0) },
                messagesOut: w.messagesOut.map { Int64($0) }, bytesIn: w.bytesIn, bytesOut: w.bytesOut, silenceMs: w.silenceMs))
        }
    }
}
