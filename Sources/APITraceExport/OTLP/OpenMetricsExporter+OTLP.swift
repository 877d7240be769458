extension OpenMetricsExporter {
    /// The totals as cumulative OTLP metrics, one resource per `app_version` (its `service.version`)
    /// named `serviceName`: `http.client.request.duration` (histogram, seconds, OpenTelemetry's
    /// buckets) and apitrace's counters, weighted by `sample_rate` as every command weighs requests.
    ///
    /// OTLP histogram counts are integers while a sampled request stands for `1 / sample_rate`
    /// requests: bucket counts are the cumulative weights rounded, then differenced, so no bucket
    /// is ever off by more than one half and the sum stays exact.
    public func otlpMetrics(serviceName: String) -> [(resource: OTLPResource, metrics: [OTLPMetric])] {
        var versions = Set(durations.keys.map(\.appVersion))
        versions.formUnion(requests.keys.map(\.request.appVersion))
        versions.formUnion(decodeFailures.keys.compactMap { $0.count > 4 ? $0[4] : nil })
        let hasGlobal = !errors.isEmpty || !sse.isEmpty || !dropped.isEmpty
        if hasGlobal { versions.insert("") }
        var groups: [(resource: OTLPResource, metrics: [OTLPMetric])] = []
        for version in versions.sorted() {
            var metrics: [OTLPMetric] = []
            let histogramPoints = durations.filter { $0.key.appVersion == version }
                .sorted { ($0.key.method, $0.key.route, $0.key.host) < ($1.key.method, $1.key.route, $1.key.host) }
                .map { key, h -> OTLPMetric.HistogramPoint in
                    var a: [OTLPAttribute] = []
                    a.add("http.request.method", key.method)
                    a.add("url.template", OTLPMapping.withoutQuery(key.route))
                    a.add("server.address", key.host.isEmpty ? nil : OTLPMapping.sanitizedHost(key.host))
                    var counts: [UInt64] = []
                    var previous: UInt64 = 0
                    for cumulative in h.buckets + [h.count] {
                        let rounded = Self.rounded(cumulative)
                        counts.append(rounded >= previous ? rounded - previous : 0)
                        previous = max(previous, rounded)
                    }
                    return .init(attributes: a, count: Self.rounded(h.count), sum: h.sum, bucketCounts: counts, bounds: Self.durationBuckets)
                }
            if !histogramPoints.isEmpty {
                metrics.append(OTLPMetric(
                    name: "http.client.request.duration", description: "Duration of HTTP client requests.", unit: "s",
                    data: .histogram(histogramPoints)))
            }
            let requestPoints = requests.filter { $0.key.request.appVersion == version }
                .sorted { Self.sortKey($0.key).lexicographicallyPrecedes(Self.sortKey($1.key)) }
                .map { key, value -> OTLPMetric.NumberPoint in
                    var a: [OTLPAttribute] = []
                    a.add("http.request.method", key.request.method)
                    a.add("url.template", OTLPMapping.withoutQuery(key.request.route))
                    a.add("server.address", key.request.host.isEmpty ? nil : OTLPMapping.sanitizedHost(key.request.host))
                    a.add("http.response.status_code", Int(key.status) ?? nil)
                    a.add("error.type", key.errorType.isEmpty ? nil : key.errorType)
                    a.add("apitrace.error_class", key.errorClass.isEmpty ? nil : key.errorClass)
                    a.add("apitrace.outcome", key.outcome)
                    return .init(attributes: a, value: value)
                }
            if !requestPoints.isEmpty {
                metrics.append(OTLPMetric(
                    name: "apitrace.http.client.requests", description: "HTTP client requests by outcome; sampled successes scaled back.",
                    unit: "{request}", data: .sum(requestPoints, monotonic: true)))
            }
            let decodePoints = decodeFailures.filter { ($0.key.count > 4 ? $0.key[4] : "") == version }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
                .map { key, value -> OTLPMetric.NumberPoint in
                    var a: [OTLPAttribute] = []
                    a.add("apitrace.decode.entity", key.first)
                    a.add("apitrace.decode.kind", key.count > 1 ? key[1] : nil)
                    a.add("apitrace.decode.path_pattern", key.count > 2 ? key[2] : nil)
                    a.add("url.template", key.count > 3 && !key[3].isEmpty ? key[3] : nil)
                    return .init(attributes: a, value: Double(value))
                }
            if !decodePoints.isEmpty {
                metrics.append(OTLPMetric(
                    name: "apitrace.decode_failures", description: "Responses that did not decode into their model.",
                    unit: "{failure}", data: .sum(decodePoints, monotonic: true)))
            }
            if version == "" {
                func counter(_ family: [[String]: Int], name: String, description: String, unit: String, keys: [String]) {
                    let points = family.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { key, value -> OTLPMetric.NumberPoint in
                        var a: [OTLPAttribute] = []
                        for (i, name) in keys.enumerated() where i < key.count && !key[i].isEmpty { a.add(name, key[i]) }
                        return .init(attributes: a, value: Double(value))
                    }
                    if !points.isEmpty { metrics.append(OTLPMetric(name: name, description: description, unit: unit, data: .sum(points, monotonic: true))) }
                }
                counter(errors, name: "apitrace.recorded_errors", description: "Errors recorded with recordError (rate-limited ones included).", unit: "{error}", keys: ["error.type"])
                counter(sse, name: "apitrace.sse.events", description: "Server-Sent Events connection changes.", unit: "{event}", keys: ["apitrace.sse.phase", "url.template", "apitrace.sse.reason"])
                counter(dropped, name: "apitrace.dropped_events", description: "Events producers had to drop.", unit: "{event}", keys: ["apitrace.dropped.reason"])
            }
            if !metrics.isEmpty {
                groups.append((OTLPResource(serviceName: serviceName, serviceVersion: version.isEmpty ? nil : version), metrics))
            }
        }
        return groups
    }

    private static func rounded(_ value: Double) -> UInt64 {
        guard value.isFinite, value > 0 else { return 0 }
        return UInt64(min(value.rounded(), 1.8e19))
    }
}
