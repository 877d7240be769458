package import APITraceFormat

extension OpenMetricsExporter {
    /// The metrics of one trace file, gathered outside any lock and added to an exporter in one go
    /// (`add(_:)`): the collector fills one per upload in the pass that checks it.
    ///
    /// Request lines are grouped by the raw bytes of their labels (method, route, host, status,
    /// error, outcome) in a reused buffer, so a file of thousands of requests makes strings once per
    /// distinct series, not once per line; the other event types are rare and counted as they come.
    package struct FileTally {
        fileprivate struct Entry {
            var method, route, host: String
            var status: Int?
            var error: String?
            var outcome: RequestOutcome
            var count = 0.0
            var sum = 0.0
            /// Weight per bucket, not cumulative: index `durationBuckets.count` is above the last bound.
            var buckets = [Double](repeating: 0, count: OpenMetricsExporter.durationBuckets.count + 1)
        }

        /// Label bytes hashed as one block (an array of bytes hashes element by element, several times slower).
        fileprivate struct Key: Hashable {
            var bytes: [UInt8]
            func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
        }

        private var index: [Key: Int] = [:]
        private var key: [UInt8] = []
        fileprivate var entries: [Entry] = []
        fileprivate var others: OpenMetricsExporter
        fileprivate var appVersion = ""

        /// An empty tally, bounded by `limits` for the events other than requests.
        package init(limits: Limits) { others = OpenMetricsExporter(limits: limits) }

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

        /// Counts one record of the file.
        package mutating func add(_ record: TraceRecord) {
            guard record.kind == .request else {
                others.add(record, appVersion: appVersion)
                return
            }
            key.removeAll(keepingCapacity: true)
            // JSON strings hold no raw NUL, so 0 separates the fields unambiguously.
            func field(_ text: RawText?) {
                if let text { key.append(contentsOf: text.bytes) }
                key.append(0)
            }
            field(record.method)
            field(record.route)
            field(record.host)
            field(record.error)
            let status = record.status ?? 0
            key.append(UInt8(truncatingIfNeeded: status >> 8))
            key.append(UInt8(truncatingIfNeeded: status))
            key.append(Self.outcomeByte(record.outcome))
            let i: Int
            if let found = index[Key(bytes: key)] {
                i = found
            } else {
                i = entries.count
                index[Key(bytes: key)] = i
                entries.append(Entry(
                    method: record.method?.string ?? "", route: record.route?.string ?? "", host: record.host?.string ?? "",
                    status: record.status, error: record.error?.string, outcome: record.outcome))
            }
            let weight = record.weight
            let seconds = (record.durationMs ?? 0) / 1000
            let bucket = OpenMetricsExporter.durationBuckets.firstIndex { seconds <= $0 } ?? OpenMetricsExporter.durationBuckets.count
            entries[i].count += weight
            entries[i].sum += seconds * weight
            entries[i].buckets[bucket] += weight
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
        for entry in tally.entries {
            addRequests(
                method: entry.method, route: entry.route, host: entry.host, status: entry.status, error: entry.error,
                outcome: entry.outcome, appVersion: tally.appVersion, count: entry.count
            ) { h in
                var cumulative = 0.0
                for i in h.buckets.indices {
                    cumulative += entry.buckets[i]
                    h.buckets[i] += cumulative
                }
                h.count += entry.count
                h.sum += entry.sum
            }
        }
        merge(tally.others)
    }
}
