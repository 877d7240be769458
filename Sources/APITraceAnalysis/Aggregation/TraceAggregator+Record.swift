import Foundation
package import APITraceFormat

extension TraceAggregator {
    /// What ``add(line:)`` made of a line.
    public enum LineOutcome: Sendable, Equatable {
        /// An event matching the filter, counted.
        case counted
        /// A valid event left out by the filter.
        case filtered
        /// An event type this version does not know, skipped.
        case unknownType
        /// A header line (only the first line of a file should be one).
        case header
        /// Not a valid trace line; the reason names the field at fault.
        case invalid(String)
    }

    /// Counts one raw JSON line (without its newline) if it is an event matching the filter.
    ///
    /// The line is scanned by the format module's ``TraceRecordScanner``, as every reader does;
    /// routes, methods and identities are interned from their bytes (no `String` per event).
    public mutating func add(line: UnsafeRawBufferPointer) -> LineOutcome {
        var scanner = TraceRecordScanner()
        switch scanner.scan(line) {
        case .event: return add(record: scanner.record)
        case .header: return .header
        case .unknownType: return .unknownType
        case .invalid(let reason): return .invalid(reason)
        }
    }

    /// Counts one scanned event if it matches the filter.
    package mutating func add(record f: TraceRecord) -> LineOutcome {
        let ms = f.timestamp
        // Hashed only for events that can affect a session (failures), so successes cost nothing.
        func session() -> UInt64? {
            guard let s = f.session else { return nil }
            return s.hasEscapes ? SessionCount.hash(s.string) : SessionCount.hash(s.bytes)
        }
        guard filter.matches(time: TraceTimestamp(millisecondsSince1970: ms)) else { base.eventsFiltered += 1; return .filtered }
        if let host = filter.hostPattern, f.kind != .dropped {
            guard f.kind == .request, let h = f.host, host.matches(h) else { base.eventsFiltered += 1; return .filtered }
        }

        switch f.kind {
        case .request:
            let routeID = Self.intern(f.route!, in: &routeNames)
            guard routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered }
            let requestError = f.error.map { Self.intern($0, in: &requestIdentities) }
            recordRequest(
                ms: ms, method: Self.intern(f.method!, in: &methods), route: routeID, outcome: f.outcome, weight: f.weight,
                durationMs: f.durationMs!, bytesIn: f.bytesIn, bytesOut: f.bytesOut, requestError: requestError,
                session: f.outcome == .success && requestError == nil ? nil : session())
        case .decodeFailure:
            let entity = f.entity!, failureKind = f.failureKind!
            let routeID = f.route.map { Self.intern($0, in: &routeNames) }
            if filter.route != nil { guard let routeID, routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered } }
            let path = f.path ?? RawText.empty
            let group = decodeGroupID(entity: entity, kind: failureKind, path: path)
            let key = f.key, message = f.message
            recordDecodeFailure(
                ms: ms, group: group, route: routeID, entity: { entity.string }, kind: { failureKind.string },
                path: { path.string }, key: { key?.string }, message: { message?.string ?? "" }, session: session())
        case .error:
            let routeID = f.route.map { Self.intern($0, in: &routeNames) }
            if filter.route != nil { guard let routeID, routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered } }
            let message = f.message
            recordError(
                ms: ms, identity: Self.intern(f.identity!, in: &recordedIdentities), route: routeID,
                suppressed: Int(f.suppressed ?? 0), session: session(), message: { message?.string ?? "" })
        case .sse:
            let routeID = Self.intern(f.route ?? RawText.empty, in: &routeNames)
            guard routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered }
            let p = f.phase!.bytes
            let phase: SSEPhase = p.equals("open") ? .open : p.equals("close") ? .close : p.equals("reconnect") ? .reconnect : p.equals("fail") ? .fail : .other
            recordSSE(
                ms: ms, phase: phase, route: routeID, reason: f.reason.map { Self.intern($0, in: &smallStrings) },
                delayMs: f.delayMs, events: f.events.map { Int($0) }, durationMs: f.durationMs)
        case .log:
            if filter.route != nil { base.eventsFiltered += 1; return .filtered }
            recordLog(ms: ms, level: Self.intern(f.level!, in: &smallStrings))
        case .dropped:
            recordDropped(ms: ms, count: Int(f.count!), reason: f.reason?.string ?? "unknown")
        case .websocket:
            let routeID = Self.intern(f.route ?? RawText.empty, in: &routeNames)
            guard routeMatches(routeID) else { base.eventsFiltered += 1; return .filtered }
            let p = f.phase!.bytes
            let phase: SSEPhase = p.equals("open") ? .open : p.equals("close") ? .close : p.equals("reconnect") ? .reconnect : p.equals("fail") ? .fail : .other
            recordWebSocket(ms: ms, WebSocketFacts(
                phase: phase, route: routeID, code: f.code.map { Int($0) }, reason: f.reason.map { Self.intern($0, in: &smallStrings) },
                delayMs: f.delayMs, durationMs: f.durationMs, messagesIn: f.messagesIn, messagesOut: f.messagesOut,
                bytesIn: f.bytesIn, bytesOut: f.bytesOut, silenceMs: f.silenceMs))
        }
        return .counted
    }

    @inline(__always)
    private static func intern(_ s: RawText, in interner: inout ByteInterner) -> Int {
        s.hasEscapes ? interner.id(of: s.string) : interner.id(of: s.bytes)
    }

    /// The group id for entity + kind + path with indices folded, built in a small stack of bytes.
    private mutating func decodeGroupID(entity: RawText, kind: RawText, path: RawText) -> Int {
        if entity.hasEscapes || kind.hasEscapes || path.hasEscapes {
            return decodeGroups.id(of: entity.string + "\u{0}" + kind.string + "\u{0}" + TraceEvent.DecodeFailure.foldIndices(path.string))
        }
        var key: [UInt8] = []
        key.reserveCapacity(entity.bytes.count + kind.bytes.count + path.bytes.count + 2)
        key.append(contentsOf: entity.bytes)
        key.append(0)
        key.append(contentsOf: kind.bytes)
        key.append(0)
        TraceEvent.DecodeFailure.foldIndices(path.bytes, into: &key)
        return key.withUnsafeBytes { decodeGroups.id(of: $0) }
    }
}

