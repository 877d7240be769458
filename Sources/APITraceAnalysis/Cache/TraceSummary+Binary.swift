import APITraceFormat
import Histogram

// The summary cache's encoding of a ``TraceSummary``: every field, so a summary read back merges
// exactly as the one that was written. Decoding treats the bytes as hostile (``BinaryReader``):
// counts are bounded, totals must add up, and anything off throws instead of trapping later.

extension TraceSummary {
    func encode(into w: inout BinaryWriter) {
        w.put(filesRead); w.put(filesFiltered); w.put(filesUnusable); w.put(unknownTypes); w.put(invalidLines)
        w.putCount(warnings.count)
        for warning in warnings { warning.encode(into: &w) }
        w.put(warningsOmitted)
        w.put(events); w.put(eventsFiltered)
        w.put(eventsByType)
        w.put(firstEvent?.millisecondsSince1970 ?? .max); w.put(lastEvent?.millisecondsSince1970 ?? .min)
        requests.encode(into: &w)
        latency.encode(into: &w)
        w.put(dropped); w.put(logLevels)
        w.putCount(routes.count)
        for (key, route) in routes {
            w.put(key.method); w.put(key.route)
            route.counts.encode(into: &w)
            route.latency.encode(into: &w)
            for sessions in [route.sessionsAffected.serverError, route.sessionsAffected.transport,
                             route.sessionsAffected.clientError, route.sessionsAffected.errors] {
                sessions.encode(into: &w)
            }
        }
        w.putCount(errors.count)
        for (key, e) in errors {
            w.put(key.identity); w.put(key.source == .recorded)
            w.put(e.events); w.put(e.suppressed)
            e.sessions.encode(into: &w)
            w.put(e.firstSeen); w.put(e.lastSeen)
            e.examples.encode(into: &w)
            w.put(e.routes)
        }
        w.putCount(decodeFailures.count)
        for (key, d) in decodeFailures {
            w.put(key.entity); w.put(key.kind); w.put(key.path)
            w.put(d.count)
            d.sessions.encode(into: &w)
            w.put(d.firstSeen); w.put(d.lastSeen)
            w.put(d.key)
            d.examplePaths.encode(into: &w); d.exampleMessages.encode(into: &w)
            w.put(d.routes)
        }
        w.put(decodeFailuresByRoute)
        w.put(sse.opens); w.put(sse.closes); w.put(sse.reconnects); w.put(sse.fails)
        w.put(sse.reasons)
        sse.reconnectDelay.encode(into: &w); sse.eventsPerConnection.encode(into: &w); sse.connectionDuration.encode(into: &w)
        w.putCount(sse.routes.count)
        for (route, c) in sse.routes { w.put(route); w.put(c.opens); w.put(c.reconnects); w.put(c.fails) }
        webSocket.encode(into: &w)
        w.putCount(appVersions.count)
        for (version, a) in appVersions {
            w.put(version)
            w.put(a.files); w.put(a.events)
            a.requests.encode(into: &w)
            w.put(a.decodeFailures); w.put(a.recordedErrors)
            a.sessionsAffected.encode(into: &w)
            w.put(a.firstMs); w.put(a.lastMs)
        }
        w.put(timeSeries.granularitySeconds)
        w.putCount(timeSeries.buckets.count)
        for (start, bucket) in timeSeries.buckets {
            w.put(start)
            bucket.requests.encode(into: &w)
            w.put(bucket.decodeFailures); w.put(bucket.recordedErrors); w.put(bucket.sseReconnects)
        }
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        self.init()
        filesRead = try r.count(); filesFiltered = try r.count(); filesUnusable = try r.count()
        unknownTypes = try r.count(); invalidLines = try r.count()
        let warningCount = try r.items(minimumSize: 6)
        guard warningCount <= Self.maximumWarnings else { throw .init() }
        for _ in 0..<warningCount { warnings.append(try TraceReadWarning(decoding: &r)) }
        warningsOmitted = try r.count()
        events = try r.count(); eventsFiltered = try r.count()
        eventsByType = try r.counts()
        let first = try r.time(), last = try r.time()
        if first != .max { firstEvent = TraceTimestamp(millisecondsSince1970: first) }
        if last != .min { lastEvent = TraceTimestamp(millisecondsSince1970: last) }
        requests = try RequestCounts(decoding: &r)
        latency = try QuantileSketch(decoding: &r)
        dropped = try r.counts(); logLevels = try r.counts()
        for _ in 0..<(try r.items(minimumSize: 60)) {
            let key = RouteKey(method: try r.string(), route: try r.string())
            var route = RouteSummary()
            route.counts = try RequestCounts(decoding: &r)
            route.latency = try QuantileSketch(decoding: &r)
            route.sessionsAffected.serverError = try SessionCount(decoding: &r)
            route.sessionsAffected.transport = try SessionCount(decoding: &r)
            route.sessionsAffected.clientError = try SessionCount(decoding: &r)
            route.sessionsAffected.errors = try SessionCount(decoding: &r)
            routes[key] = route
        }
        for _ in 0..<(try r.items(minimumSize: 30)) {
            let key = ErrorIdentityKey(identity: try r.string(), source: try r.bool() ? .recorded : .request)
            var e = ErrorIdentitySummary()
            e.events = try r.count(); e.suppressed = try r.count()
            e.sessions = try SessionCount(decoding: &r)
            e.firstSeen = try r.time(); e.lastSeen = try r.time()
            e.examples = try ExampleSet(decoding: &r)
            for (route, n) in try r.counts() { e.addRoute(route, count: n) }
            errors[key] = e
        }
        for _ in 0..<(try r.items(minimumSize: 40)) {
            let key = DecodeFailureKey(entity: try r.string(), kind: try r.string(), path: try r.string())
            var d = DecodeFailureSummary()
            d.count = try r.count()
            d.sessions = try SessionCount(decoding: &r)
            d.firstSeen = try r.time(); d.lastSeen = try r.time()
            d.key = try r.optionalString()
            d.examplePaths = try ExampleSet(decoding: &r); d.exampleMessages = try ExampleSet(decoding: &r)
            let routes = try r.counts()
            guard routes.count <= ErrorIdentitySummary.maximumRoutes + 1 else { throw .init() }
            d.routes = routes
            decodeFailures[key] = d
        }
        decodeFailuresByRoute = try r.counts()
        sse.opens = try r.count(); sse.closes = try r.count(); sse.reconnects = try r.count(); sse.fails = try r.count()
        sse.reasons = try r.counts()
        sse.reconnectDelay = try QuantileSketch(decoding: &r)
        sse.eventsPerConnection = try QuantileSketch(decoding: &r)
        sse.connectionDuration = try QuantileSketch(decoding: &r)
        for _ in 0..<(try r.items(minimumSize: 7)) {
            let route = try r.string()
            var c = SSERouteCounts()
            c.opens = try r.count(); c.reconnects = try r.count(); c.fails = try r.count()
            sse.routes[route] = c
        }
        webSocket = try WebSocketSummary(decoding: &r)
        for _ in 0..<(try r.items(minimumSize: 50)) {
            let version = try r.string()
            var a = AppVersionSummary()
            a.files = try r.count(); a.events = try r.count()
            a.requests = try RequestCounts(decoding: &r)
            a.decodeFailures = try r.count(); a.recordedErrors = try r.count()
            a.sessionsAffected = try SessionCount(decoding: &r)
            a.firstMs = try r.time(); a.lastMs = try r.time()
            appVersions[version] = a
        }
        let granularity = try r.get(Int64.self)
        guard granularity == 1 || TimeSeries.ladder.contains(granularity)
            || (granularity % TimeSeries.ladder.last! == 0 && granularity <= 1 << 40) else { throw .init() }
        timeSeries = TimeSeries(granularitySeconds: granularity)
        let bucketCount = try r.items(minimumSize: 40)
        guard bucketCount <= TimeSeries.maximumBuckets else { throw .init() }
        for _ in 0..<bucketCount {
            let start = try r.get(Int64.self)
            guard (0...BinaryReader.latestMilliseconds / 1000).contains(start), start % granularity == 0 else { throw .init() }
            var bucket = TimeBucket()
            bucket.requests = try RequestCounts(decoding: &r)
            bucket.decodeFailures = try r.count(); bucket.recordedErrors = try r.count(); bucket.sseReconnects = try r.count()
            timeSeries.add(bucket, at: start)
        }
    }
}

extension RequestCounts {
    func encode(into w: inout BinaryWriter) {
        w.put(requests); w.put(serverErrors); w.put(clientErrors); w.put(transportErrors); w.put(cancelled); w.put(offline)
        w.put(estimatedSuccesses); w.put(sampled); w.put(bytesIn); w.put(bytesOut)
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        self.init()
        requests = try r.count(); serverErrors = try r.count(); clientErrors = try r.count()
        transportErrors = try r.count(); cancelled = try r.count(); offline = try r.count()
        estimatedSuccesses = try r.amount(); sampled = try r.count()
        bytesIn = try r.bytesTotal(); bytesOut = try r.bytesTotal()
        // The outcomes split the requests; a summary where they do not is not one this code wrote.
        guard serverErrors + clientErrors + transportErrors + cancelled + offline <= requests, sampled <= requests else { throw .init() }
    }
}

extension QuantileSketch {
    /// Sparse: the non-empty buckets, with the exact smallest non-zero and largest values so
    /// percentiles (clamped to them) and the maximum read back exactly.
    func encode(into w: inout BinaryWriter) {
        w.put(count); w.put(sum)
        guard count > 0, let histogram = histogram ?? buckets?.histogram else { return }
        w.put(histogram.min); w.put(histogram.maxRecorded)
        let buckets = histogram.nonEmptyBuckets()
            ?? histogram.recordedValues().map { (histogram.lowestEquivalentForValue($0.value), $0.count) }
        // Ascending values as varint steps, counts as varints: a few bytes per bucket.
        w.putCount(buckets.count)
        var previous: UInt64 = 0
        for (value, n) in buckets {
            w.put(Int(bitPattern: UInt(value - previous))); w.put(Int(bitPattern: UInt(n)))
            previous = value
        }
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        self.init()
        let count = try r.get(UInt64.self), sum = try r.amount()
        guard count > 0 else {
            guard sum == 0 else { throw .init() }
            return
        }
        // Values the sketch records are at most 10^15 ms in thousandths.
        let limit: UInt64 = 1_000_000_000_000_000_000
        let smallest = try r.get(UInt64.self), largest = try r.get(UInt64.self)
        guard count <= UInt64(BinaryReader.maximumCount), smallest <= largest, largest <= limit else { throw .init() }
        var total: UInt64 = 0
        var buckets = Buckets(values: [], smallest: smallest, largest: largest)
        var value: UInt64 = 0
        let items = try r.items(minimumSize: 2)
        buckets.values.reserveCapacity(items)
        for _ in 0..<items {
            let step = try r.varint(), n = try r.varint()
            guard step <= limit, n <= UInt64(BinaryReader.maximumCount) else { throw .init() }
            value += step
            guard value <= limit else { throw .init() }
            total += n
            guard total <= count else { throw .init() }
            // Each bucket's value moved inside [smallest, largest] stays in its bucket (the
            // extremes lie in the first and last non-empty ones) and leaves them exact.
            buckets.values.append((value == 0 ? 0 : Swift.min(Swift.max(value, Swift.max(smallest, 1)), largest), n))
        }
        guard total == count else { throw .init() }
        // Recorded into a histogram when merged or asked (QuantileSketch.Buckets).
        self.buckets = buckets
        self.count = count
        self.sum = sum
    }
}

extension SessionCount {
    func encode(into w: inout BinaryWriter) {
        if let registers {
            w.put(UInt8(1))
            w.put(raw: registers)
        } else {
            w.put(UInt8(0))
            w.putCount(exact.count)
            for hash in exact { w.put(hash) }
        }
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        self.init()
        switch try r.get(UInt8.self) {
        case 0:
            let n = try r.items(minimumSize: 8)
            guard n <= Self.exactLimit else { throw .init() }
            exact.reserveCapacity(n)
            for _ in 0..<n { exact.insert(try r.get(UInt64.self)) }
        case 1:
            var registers = [UInt8](repeating: 0, count: 1 << Self.precision)
            for i in registers.indices {
                let rank = try r.get(UInt8.self)
                guard rank <= Self.maximumRank else { throw .init() }
                registers[i] = rank
            }
            self.registers = registers
        default:
            throw .init()
        }
    }
}

extension ExampleSet {
    func encode(into w: inout BinaryWriter) {
        w.putCount(items.count)
        for item in items { w.put(item.time); w.put(item.text) }
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        self.init()
        let n = try r.items(minimumSize: 12)
        guard n <= Self.capacity else { throw .init() }
        for _ in 0..<n {
            let time = try r.time()
            insert(try r.string(), time: time)
        }
    }
}

extension TraceReadWarning {
    func encode(into w: inout BinaryWriter) {
        w.put(path)
        w.put(eventsKept)
        switch kind {
        case .unreadable(let reason): w.put(UInt8(0)); w.put(reason)
        case .notATraceFile(let reason): w.put(UInt8(1)); w.put(reason)
        case .newerVersion(let version): w.put(UInt8(2)); w.put(version)
        case .truncated(let offset): w.put(UInt8(3)); w.put(offset)
        case .corrupt(let offset, let detail): w.put(UInt8(4)); w.put(offset); w.put(detail)
        case .invalidLine(let line, let reason): w.put(UInt8(5)); w.put(line); w.put(reason)
        case .partialLastLine(let line): w.put(UInt8(6)); w.put(line)
        case .lineTooLong(let line, let offset, let limit): w.put(UInt8(7)); w.put(line); w.put(offset); w.put(limit)
        case .sampleRateIgnored(let line, let count): w.put(UInt8(8)); w.put(line); w.put(count)
        case .warningsOmitted(let count): w.put(UInt8(9)); w.put(count)
        case .limitReached(let detail): w.put(UInt8(10)); w.put(detail)
        }
    }

    init(decoding r: inout BinaryReader) throws(BinaryReader.Invalid) {
        let path = try r.string()
        let kept = try r.count()
        let kind: Kind
        switch try r.get(UInt8.self) {
        case 0: kind = .unreadable(try r.string())
        case 1: kind = .notATraceFile(try r.string())
        case 2:
            let version = Int64(bitPattern: try r.varint())
            guard (Int64(Int32.min)...Int64(Int32.max)).contains(version) else { throw .init() }
            kind = .newerVersion(Int(version))
        case 3: kind = .truncated(byteOffset: try r.count())
        case 4: kind = .corrupt(byteOffset: try r.count(), detail: try r.string())
        case 5: kind = .invalidLine(line: try r.count(), reason: try r.string())
        case 6: kind = .partialLastLine(line: try r.count())
        case 7: kind = .lineTooLong(line: try r.count(), byteOffset: try r.count(), limit: try r.count())
        case 8: kind = .sampleRateIgnored(line: try r.count(), count: try r.count())
        case 9: kind = .warningsOmitted(try r.count())
        case 10: kind = .limitReached(try r.string())
        default: throw .init()
        }
        self.init(path: path, kind: kind, eventsKept: kept)
    }
}
