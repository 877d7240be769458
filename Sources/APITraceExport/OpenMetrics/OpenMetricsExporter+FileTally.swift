package import APITraceFormat

extension OpenMetricsExporter {
    /// The metrics of one trace file, gathered outside any lock and added to an exporter in one go
    /// (`add(_:)`): the collector fills one per upload in the pass that checks it.
    ///
    /// Lines are grouped by the raw bytes of their labels in a reused buffer, so a file of thousands
    /// of events makes strings once per distinct series, not once per line: requests by method,
    /// route, host, status, error and outcome; the other types by the fields their series read
    /// (counted into the exporter's families in the order their series were first seen, which is
    /// what adding them line by line did, so the bounds pick the same routes and identities).
    package struct FileTally {
        fileprivate struct Entry {
            var method, route, host: String
            var status: Int?
            var error: String?
            var outcome: RequestOutcome
        }

        /// The numbers of request series `n` at `n * statsStride` in ``stats``: weight, weighted
        /// seconds, then weight per bucket (not cumulative; the last is above the last bound). One
        /// flat array, so a line updates it under one uniqueness check, where an array of buckets
        /// inside each entry cost two checks and a nested access per line.
        fileprivate static let statsStride = OpenMetricsExporter.durationBuckets.count + 3
        fileprivate var stats: [Double] = []

        /// One series of an event type other than requests, with its labels as the exporter takes them.
        fileprivate enum Series {
            case decodeFailure(entity: String, kind: String, pathPattern: String, route: String)
            case error(identity: String)
            case sse(phase: String, route: String, reason: String)
            case websocket(phase: String, route: String, code: Int?)
            case dropped(reason: String)
        }

        /// Requests' series (``entries``) and the other types' (``series``) by their label bytes.
        private var index = SeriesTable()
        private var otherIndex = SeriesTable()
        private var key: [UInt8] = []
        fileprivate var entries: [Entry] = []
        /// The other types' series in the order first seen, with their counts.
        fileprivate var series: [(series: Series, count: Int)] = []
        fileprivate let limits: Limits
        /// ``OpenMetricsExporter/durationBuckets``, held here: the global is checked for
        /// initialization and retained on every read, once per line.
        private let bounds = OpenMetricsExporter.durationBuckets
        fileprivate var appVersion = ""

        /// An empty tally, bounded by `limits` for the events other than requests.
        package init(limits: Limits) { self.limits = limits }

        /// Starts the file: its header names the `app_version` its events are counted under.
        package mutating func begin(header: TraceFileHeader) { appVersion = header.appVersion ?? "" }

        /// The outcome as one key byte (`allCases` would build an array per request).
        @inline(__always)
        private static func outcomeByte(_ outcome: RequestOutcome) -> UInt8 {
            switch outcome {
            case .success: 0
            case .clientError: 1
            case .serverError: 2
            case .transport: 3
            case .cancelled: 4
            case .offline: 5
            }
        }

        /// Appends `text` to ``key`` as ``put(_:_:)`` lays it out.
        @inline(__always)
        private mutating func field(_ text: RawText?) {
            guard let text else { key.append(0); return }
            key.append(1)
            key.append(contentsOf: text.bytes)
            key.append(0)
        }

        @inline(__always)
        private mutating func number(_ value: Int64?) {
            guard let value else { key.append(0); return }
            key.append(1)
            withUnsafeBytes(of: value.littleEndian) { key.append(contentsOf: $0) }
        }

        /// Counts one record of the file.
        package mutating func add(_ record: TraceRecord) { add(CountedRecord(record)) }

        /// Counts one line of the file by its counted fields.
        package mutating func add(_ record: CountedRecord) {
            guard record.kind == .request else {
                key.removeAll(keepingCapacity: true)
                addOther(record)
                return
            }
            // The key written in place (on the stack for any ordinary label) rather than appended
            // to an array field by field.
            let length = Self.keyLength(record.method) + Self.keyLength(record.route) + Self.keyLength(record.host)
                + Self.keyLength(record.error) + 3
            let status = record.status ?? 0
            let (i, isNew) = withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer in
                var at = buffer.baseAddress!
                at = Self.put(record.method, at)
                at = Self.put(record.route, at)
                at = Self.put(record.host, at)
                at = Self.put(record.error, at)
                at.storeBytes(of: UInt8(truncatingIfNeeded: status >> 8), as: UInt8.self)
                (at + 1).storeBytes(of: UInt8(truncatingIfNeeded: status), as: UInt8.self)
                (at + 2).storeBytes(of: Self.outcomeByte(record.outcome), as: UInt8.self)
                return index.series(of: UnsafeRawBufferPointer(buffer))
            }
            if isNew {
                entries.append(Entry(
                    method: record.method?.string ?? "", route: record.route?.string ?? "", host: record.host?.string ?? "",
                    status: record.status, error: record.error?.string, outcome: record.outcome))
                stats.append(contentsOf: repeatElement(0, count: Self.statsStride))
            }
            let weight = record.weight
            let seconds = (record.durationMs ?? 0) / 1000
            var bucket = 0
            let bounds = self.bounds
            while bucket < bounds.count && !(seconds <= bounds[bucket]) { bucket += 1 }
            let base = i * Self.statsStride
            stats.withUnsafeMutableBufferPointer { stats in
                stats[base] += weight
                stats[base + 1] += seconds * weight
                stats[base + 2 + bucket] += weight
            }
        }

        /// Bytes ``put(_:_:)`` writes for `text`.
        @inline(__always)
        private static func keyLength(_ text: RawText?) -> Int { text.map { $0.bytes.count + 2 } ?? 1 }

        /// Writes one field of a series key at `at`: 1, the bytes, 0 for a text; 0 for none. JSON
        /// strings hold no raw NUL, so 0 ends a field unambiguously, and a field's absence is told
        /// apart from its emptiness (as the exporter tells them apart). Returns where it ends.
        @inline(__always)
        private static func put(_ text: RawText?, _ at: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
            guard let text else {
                at.storeBytes(of: 0, as: UInt8.self)
                return at + 1
            }
            at.storeBytes(of: 1, as: UInt8.self)
            let n = text.bytes.count
            if n > 0 { copy(text.bytes.baseAddress!, to: at + 1, n) }
            (at + 1 + n).storeBytes(of: 0, as: UInt8.self)
            return at + 2 + n
        }

        /// Copies `n` (at least 1) bytes inline: labels are a few bytes to a few dozen, where a call
        /// to `memcpy` per field cost more than the copy. Reads and writes only the `n` bytes.
        @inline(__always)
        private static func copy(_ from: UnsafeRawPointer, to: UnsafeMutableRawPointer, _ n: Int) {
            if n >= 8 {
                var k = 0
                while k &+ 8 <= n {
                    to.storeBytes(of: from.loadUnaligned(fromByteOffset: k, as: UInt64.self), toByteOffset: k, as: UInt64.self)
                    k &+= 8
                }
                // The last (partial) word again, overlapping what is already copied.
                if k < n {
                    to.storeBytes(of: from.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self), toByteOffset: n &- 8, as: UInt64.self)
                }
                return
            }
            for k in 0..<n { to.storeBytes(of: from.load(fromByteOffset: k, as: UInt8.self), toByteOffset: k, as: UInt8.self) }
        }

        /// Counts an event of another type under its series (what ``OpenMetricsExporter/add(_:appVersion:)`` reads of it).
        private mutating func addOther(_ record: CountedRecord) {
            let count: Int
            switch record.kind {
            case .decodeFailure:
                key.append(1); field(record.entity); field(record.failureKind); field(record.path); field(record.route)
                count = 1
            case .error:
                key.append(2); field(record.identity)
                count = Int(clamping: (record.suppressed ?? 0).addingSaturated(1))
            case .sse:
                key.append(3); field(record.phase); field(record.route); field(record.reason)
                count = 1
            case .websocket:
                key.append(4); field(record.phase); field(record.route); number(record.code)
                count = 1
            case .dropped:
                key.append(5); field(record.reason)
                count = Int(clamping: record.count ?? 0)
            case .log, .request:
                return
            }
            let (i, isNew) = otherIndex.series(of: key)
            if !isNew {
                series[i].count = series[i].count.addingSaturated(count)
                return
            }
            let made: Series
            switch record.kind {
            case .decodeFailure:
                made = .decodeFailure(
                    entity: record.entity?.string ?? "", kind: record.failureKind?.string ?? "",
                    pathPattern: TraceEvent.DecodeFailure.foldIndices(record.path?.string ?? ""), route: record.route?.string ?? "")
            case .error: made = .error(identity: record.identity?.string ?? "")
            case .sse: made = .sse(phase: record.phase?.string ?? "", route: record.route?.string ?? "", reason: record.reason?.string ?? "")
            case .websocket: made = .websocket(phase: record.phase?.string ?? "", route: record.route?.string ?? "", code: record.code.map { Int($0) })
            default: made = .dropped(reason: record.reason?.string ?? "")
            }
            series.append((made, count))
        }

        /// The events other than requests, counted into an exporter of this file's bounds in the order their series were first seen.
        fileprivate var others: OpenMetricsExporter {
            var others = OpenMetricsExporter(limits: limits)
            addOthers(to: &others)
            return others
        }

        /// Adds the events other than requests to `exporter`, series by series in the order first seen.
        fileprivate func addOthers(to exporter: inout OpenMetricsExporter) {
            for (series, count) in series {
                switch series {
                case .decodeFailure(let entity, let kind, let pathPattern, let route):
                    exporter.addDecodeFailure(entity: entity, kind: kind, pathPattern: pathPattern, route: route, appVersion: appVersion, count: count)
                case .error(let identity):
                    exporter.addError(identity: identity, count: count)
                case .sse(let phase, let route, let reason):
                    exporter.addSSE(phase: phase, route: route, reason: reason, count: count)
                case .websocket(let phase, let route, let code):
                    for _ in 0..<count { exporter.addWebSocket(phase: phase, route: route, code: code) }
                case .dropped(let reason):
                    exporter.addDropped(count: count, reason: reason)
                }
            }
        }
    }

    /// Reads one trace file once through the reading layer (``TraceFileReader/forEachRecord(header:_:)``)
    /// into a ``FileTally``; returns it with what reading met (header, events, skipped lines, warnings).
    package static func tally(file path: String, limits: Limits = Limits()) -> (tally: FileTally, scan: TraceFileReader.RecordScan) {
        var tally = FileTally(limits: limits)
        let scan = TraceFileReader(path: path).forEachRecord(header: { header in
            tally.begin(header: header)
            return true
        }) { record, _ in
            tally.add(record)
            return true
        }
        return (tally, scan)
    }

    /// Adds a file's tally, bounded by this exporter's limits.
    package mutating func add(_ tally: FileTally) {
        // The parts read, taken out first: a closure reading `tally` itself copied the whole tally per series.
        let stats = tally.stats, appVersion = tally.appVersion
        for n in tally.entries.indices {
            let entry = tally.entries[n]
            let base = n * FileTally.statsStride
            addRequests(
                method: entry.method, route: entry.route, host: entry.host, status: entry.status, error: entry.error,
                outcome: entry.outcome, appVersion: appVersion, count: stats[base]
            ) { h in
                var cumulative = 0.0
                for i in h.buckets.indices {
                    cumulative += stats[base + 2 + i]
                    h.buckets[i] += cumulative
                }
                h.count += stats[base]
                h.sum += stats[base + 1]
            }
        }
        // The other types through an exporter of the file's own (``FileTally/others``), then merged,
        // as a file has always been added; or, when no bound can be reached on the way (the
        // file's series, however they fall into families, leave every family, route and identity
        // under its limit both there and here), added here directly, which ends the same:
        // nothing becomes `(other)`, so neither step nor order changes a count.
        let added = tally.series.count, own = tally.limits
        if hasRoom(for: added), added < min(own.seriesPerFamily, own.routes, own.identities) - 1 {
            tally.addOthers(to: &self)
        } else {
            merge(tally.others)
        }
    }

    /// True when `added` more series in any family, and as many new routes and identities, stay
    /// under every bound of ``Limits``.
    private func hasRoom(for added: Int) -> Bool {
        let fullest = max(decodeFailures.count, errors.count, sse.count, websocket.count, dropped.count)
        return fullest + added < limits.seriesPerFamily - 1 && routes.count + added < limits.routes - 1
            && identities.count + added < limits.identities - 1
    }
}
