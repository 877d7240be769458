import APITraceFormat

extension FailureComparisonCounts {
    /// The counts of one file, gathered without a `String` per event: routes, hosts and error
    /// identities are interned from their bytes (``ByteInterner``) into arrays, and turned into
    /// rows once, at the end of the file. A file has one app version, so its routes are also its
    /// app-version-on-route rows and its totals its app-version row.
    struct FileTally {
        let appVersion: String
        private var routes = ByteInterner()
        private var hosts = ByteInterner(capacity: 16)
        private var identities = ByteInterner()
        private var byRoute: [Pair] = []
        private var byHost: [Pair] = []
        private var byIdentity: [Pair] = []
        /// Failures by class: server_error, transport, decode_failure.
        private var byClass = [Pair](repeating: Pair(), count: 3)
        private var byDecodePath: [String: Pair] = [:]
        /// Requests and failures, decode failures included.
        private var total = Pair()
        /// The same without decode failures (what the host dimension holds).
        private var requestTotal = Pair()
        private var noHost: Int?

        init(appVersion: String) { self.appVersion = appVersion }

        @inline(__always)
        private static func id(_ text: RawText?, _ interner: inout ByteInterner, _ table: inout [Pair], empty: String = "-") -> Int {
            let id: Int
            if let text, text.bytes.count > 0 {
                id = text.hasEscapes ? interner.id(of: text.string) : interner.id(of: text.bytes)
            } else {
                id = interner.id(of: empty)
            }
            while table.count <= id { table.append(Pair()) }
            return id
        }

        /// Counts one validated record under the comparison's failure definition (requests and
        /// decode failures; other event types are ignored).
        @inline(__always)
        mutating func add(_ record: TraceRecord, side: Side) {
            switch record.kind {
            case .request:
                let outcome = record.outcome
                guard !outcome.isClientSide else { return }
                let failed = outcome.isFailure
                let tally = failed ? Tally(requests: 1, failures: 1) : Tally(requests: record.weight, failures: 0)
                let route = Self.id(record.route, &routes, &byRoute)
                byRoute[route][side].add(tally)
                let host = Self.id(record.host, &hosts, &byHost)
                byHost[host][side].add(tally)
                total[side].add(tally)
                requestTotal[side].add(tally)
                guard failed else { return }
                let failure = Tally(requests: 0, failures: 1)
                byClass[outcome == .serverError ? 0 : 1][side].add(failure)
                let identity: Int
                if let error = record.error {
                    identity = Self.id(error, &identities, &byIdentity, empty: "")
                } else {
                    identity = Self.id(nil, &identities, &byIdentity, empty: record.status.map { "HTTP \($0)" } ?? "transport failure")
                }
                byIdentity[identity][side].add(failure)
            case .decodeFailure:
                let failure = Tally(requests: 0, failures: 1)
                let route = Self.id(record.route, &routes, &byRoute)
                byRoute[route][side].add(failure)
                total[side].add(failure)
                byClass[2][side].add(failure)
                let entity = record.entity?.string ?? "?"
                let path = record.path.map { TraceEvent.DecodeFailure.foldIndices($0.string) } ?? ""
                byDecodePath[path.isEmpty ? entity : "\(entity) \(path)", default: Pair()][side].add(failure)
            default:
                break
            }
        }

        /// The file's rows, added to `counts`.
        func merge(into counts: inout FailureComparisonCounts) {
            guard total != Pair() else { return }
            counts.totals.add(total)
            counts.add(total, .appVersion, RowKey(appVersion))
            for (id, pair) in byRoute.enumerated() where pair != Pair() {
                let route = routes.string(id)
                counts.add(pair, .route, RowKey(route))
                counts.add(pair, .appVersionRoute, RowKey(appVersion, route: route))
            }
            for (id, pair) in byHost.enumerated() where pair != Pair() { counts.add(pair, .host, RowKey(hosts.string(id))) }
            for (id, pair) in byIdentity.enumerated() where pair != Pair() { counts.add(pair, .errorIdentity, RowKey(identities.string(id))) }
            for (name, pair) in zip(["server_error", "transport", "decode_failure"], byClass) where pair != Pair() {
                counts.add(pair, .outcomeClass, RowKey(name))
            }
            for (path, pair) in byDecodePath { counts.add(pair, .decodePath, RowKey(path)) }
        }
    }
}
