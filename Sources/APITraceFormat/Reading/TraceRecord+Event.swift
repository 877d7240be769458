extension TraceRecord {
    /// The header this record holds (after ``TraceRecordScanner`` returned `.header`).
    var header: TraceFileHeader {
        TraceFileHeader(
            version: Int(clamping: version ?? 0), producer: producer?.string ?? "unknown", app: app?.string,
            appVersion: appVersion?.string, host: host?.string,
            started: TraceTimestamp(millisecondsSince1970: started ?? 0))
    }

    /// The full event this record holds (after ``TraceRecordScanner`` returned `.event`): text
    /// decoded to `String`, the JSON text of objects and arrays read into maps and lists.
    package var event: TraceEvent {
        let payload: TraceEvent.Payload
        switch kind {
        case .request:
            let hasTiming = dnsMs != nil || connectMs != nil || tlsMs != nil || ttfbMs != nil || networkProtocol != nil || reused != nil
            payload = .request(.init(
                method: method?.string ?? "", route: route?.string ?? "", host: host?.string,
                status: status, durationMs: durationMs ?? 0, bytesIn: bytesIn,
                bytesOut: bytesOut, error: error?.string, attempt: Int(attempt ?? 1), sampleRate: sampleRate,
                timing: hasTiming ? TraceEvent.Request.Timing(
                    dnsMs: dnsMs, connectMs: connectMs, tlsMs: tlsMs, firstByteMs: ttfbMs,
                    networkProtocol: networkProtocol?.string, reusedConnection: reused) : nil,
                port: port.map { Int($0) }))
        case .decodeFailure:
            payload = .decodeFailure(.init(
                route: route?.string, entity: entity?.string ?? "",
                kind: .init(rawValue: failureKind?.string ?? ""), path: path?.string ?? "", key: key?.string,
                message: message?.string ?? ""))
        case .error:
            payload = .error(.init(
                identity: identity?.string ?? "", message: message?.string ?? "",
                userInfo: userInfoJSON.jsonStringMap, underlying: underlyingJSON.jsonStrings,
                route: route?.string, file: file?.string, line: line.map { Int(clamping: $0) },
                suppressed: suppressed.map { Int(clamping: $0) }))
        case .sse:
            payload = .sse(.init(
                phase: .init(rawValue: phase?.string ?? ""), route: route?.string ?? "", attempt: attempt.map { Int($0) },
                delayMs: delayMs, lastEventID: lastEventID?.string, reason: reason?.string, status: status,
                events: events.map { Int(clamping: $0) }, durationMs: durationMs))
        case .websocket:
            payload = .websocket(.init(
                phase: .init(rawValue: phase?.string ?? ""), route: route?.string ?? "", attempt: attempt.map { Int($0) },
                code: code.map { Int($0) }, reason: reason?.string, closedBy: closedBy?.string, status: status,
                delayMs: delayMs, durationMs: durationMs, messagesIn: messagesIn.map { Int(clamping: $0) },
                messagesOut: messagesOut.map { Int(clamping: $0) }, bytesIn: bytesIn, bytesOut: bytesOut,
                pings: pings.map { Int(clamping: $0) }, pingRTTMs: pingRTTMs, silenceMs: silenceMs))
        case .log:
            payload = .log(.init(
                level: level?.string ?? "", message: message?.string ?? "", metadata: metadataJSON.jsonStringMap,
                source: source?.string))
        case .dropped:
            payload = .dropped(.init(count: Int(clamping: count ?? 0), reason: reason?.string ?? "unknown"))
        }
        return TraceEvent(
            timestamp: TraceTimestamp(millisecondsSince1970: timestamp), session: session?.string,
            traceID: traceID?.string, spanID: spanID?.string, payload)
    }
}
