import APITraceAnalysis
import APITraceFormat
import Foundation

/// The per-file half of ``WindowedFailureCounter``: rules turned into matchers, and the line loop
/// over the format module's validated records (``TraceFileReader/forEachRecord(header:_:)``).
struct ScanPlan: Sendable {
    struct RulePattern: Sendable {
        var route: TextPattern?
        var host: TextPattern?
        var appVersion: String?
        var failure: AlertRule.FailureDefinition.Matcher
        var decodeFailures: Bool
        /// Counts WebSocket closes (abnormal ones failing) instead of requests.
        var webSocketCloses: Bool
        /// For a latency rule: slower requests are the bad events.
        var latencyMs: Double?
        var evidence: Range<Int64>?
        /// The comparison baseline before ``evidence``.
        var baseline: Range<Int64>?
        /// A grouped rule's keys: each group's requests are also counted on their own.
        var groupBy: [AlertGroup.Key]
        /// Most groups counted on their own in one file; the rest go to ``AlertGroup/otherCountingKey``.
        var maxGroups: Int
        /// Count only the traffic of this group (its counting key), for a group's evidence.
        var onlyGroup: String?
        var onlyGroupKeys: [AlertGroup.Key] = []
        var needsGroup: Bool { !groupBy.isEmpty || onlyGroup != nil }

        @inline(__always) func matches(_ pattern: TextPattern?, _ value: RawText?) -> Bool {
            TextPattern.admits(pattern, value)
        }
    }

    let patterns: [RulePattern]
    let ranges: [Range<Int64>]
    let span: Range<Int64>
    let bucket: Int64

    init(counter: WindowedFailureCounter) {
        patterns = zip(counter.rules, zip(counter.evidenceRanges, counter.comparisonBaselines)).map { rule, ranges in
            let (evidence, baseline) = ranges
            return RulePattern(
                route: rule.scope.route.map { TextPattern($0) }, host: rule.scope.host.map { TextPattern($0) },
                appVersion: rule.scope.appVersion, failure: .init(rule.failure), decodeFailures: rule.failure.decodeFailures,
                webSocketCloses: rule.failure.webSocketCloses, latencyMs: rule.latencyMs, evidence: evidence, baseline: baseline,
                groupBy: rule.groupBy, maxGroups: rule.maxGroups,
                onlyGroup: rule.onlyGroup.flatMap { $0.isOther ? nil : AlertGroup.countingKey($0.values) },
                onlyGroupKeys: rule.onlyGroup?.keys ?? [])
        }
        ranges = counter.ranges
        span = (ranges.map(\.lowerBound).min() ?? 0)..<(ranges.map(\.upperBound).max() ?? 0)
        bucket = counter.bucketMilliseconds
    }

    struct FileCounts: Sendable {
        var runs: [BucketRun]
        /// Per rule, a grouped rule's runs by group counting key (empty for other rules).
        var groups: [[String: BucketRun]] = []
        /// Per rule, true when the file held more groups than `max_groups`.
        var overflowed: [Bool] = []
        var evidence: [EvidenceTally]
        var lines = 0
        var warnings: [TraceReadWarning] = []
        var fromCache = false
        /// Counted events whose time lies outside the plan's span (a file's counts are cached only
        /// without any: a cached entry then holds exactly what any later run's ranges can ask of it).
        var outsideSpan = 0
        /// The file's header, when it had one.
        var header: TraceFileHeader?
        /// True when the header put the file outside every rule's scope (it was not read on).
        var declined = false
        /// Where reading ended in the file (``TraceFileReader/RecordScan/endOffset``).
        var endOffset: Int64 = 0
    }

    func scan(_ reader: TraceFileReader) -> FileCounts {
        var out = FileCounts(runs: Array(repeating: BucketRun(), count: patterns.count), evidence: Array(repeating: EvidenceTally(), count: patterns.count))
        out.groups = Array(repeating: [:], count: patterns.count)
        out.overflowed = Array(repeating: false, count: patterns.count)
        var active = [Bool](repeating: true, count: patterns.count)
        var appVersion = "-"
        let scan = reader.forEachRecord(header: { header in
            appVersion = header.appVersion ?? "-"
            for i in patterns.indices where patterns[i].appVersion != nil {
                active[i] = patterns[i].appVersion == header.appVersion
            }
            return active.contains(true)
        }) { record, _ in
            guard record.kind == .request || record.kind == .decodeFailure || record.kind == .error || record.kind == .websocket else { return true }
            guard span.contains(record.timestamp) else { out.outsideSpan += 1; return true }
            guard
                  ranges.count == 1 || ranges.contains(where: { $0.contains(record.timestamp) }) else { return true }
            count(record, active: active, appVersion: appVersion, into: &out)
            return true
        }
        for i in patterns.indices where out.groups[i].count > patterns[i].maxGroups + 1 || out.groups[i].count > patterns[i].maxGroups && out.groups[i][AlertGroup.otherCountingKey] == nil {
            Self.trim(&out.groups[i], to: patterns[i].maxGroups)
            out.overflowed[i] = true
        }
        out.lines = scan.events + scan.invalidLines + scan.unknownTypes
        out.warnings = scan.warnings
        out.header = scan.header
        out.declined = scan.declined
        out.endOffset = scan.endOffset
        return out
    }

    @inline(__always) private func count(_ f: TraceRecord, active: [Bool], appVersion: String, into out: inout FileCounts) {
        let ts = f.timestamp
        let b = EpochBuckets.index(of: ts, width: bucket)
        for i in patterns.indices where active[i] {
            let p = patterns[i]
            guard p.matches(p.route, f.route), p.matches(p.host, f.host) else { continue }
            var group: String?
            if p.needsGroup {
                let key = Self.groupKey(f, keys: p.groupBy.isEmpty ? p.onlyGroupKeys : p.groupBy, appVersion: appVersion)
                if let only = p.onlyGroup, key != only { continue }
                if !p.groupBy.isEmpty {
                    if out.groups[i][key] == nil, out.groups[i].count >= Self.scanCapacity(p.maxGroups) {
                        Self.trim(&out.groups[i], to: p.maxGroups)
                        out.overflowed[i] = true
                    }
                    group = key
                }
            }
            let inEvidence = p.evidence?.contains(ts) ?? false
            let side: FailureComparisonCounts.Side? = inEvidence ? .window : (p.baseline?.contains(ts) ?? false) ? .baseline : nil
            if p.webSocketCloses != (f.kind == .websocket) {
                // A WebSocket rule reads closes only; a request rule never reads them. Errors stay evidence.
                if f.kind == .error, inEvidence, let identity = f.identity { out.evidence[i].errorIdentities.addBounded(identity.string, 1) }
                continue
            }
            switch f.kind {
            case .websocket:
                guard let phase = f.phase, phase.equals(text: "close") else { continue }
                let code = f.code.map { Int($0) }
                let failed = TraceEvent.WebSocket.isAbnormalClose(code: code)
                out.runs[i].add(bucket: b, requests: 1, failures: failed ? 1 : 0)
                if let group { out.groups[i][group, default: BucketRun()].add(bucket: b, requests: 1, failures: failed ? 1 : 0) }
                let identity = "WebSocket " + (code.map { "\($0) \(TraceEvent.WebSocket.reasonClass(ofCode: $0))" } ?? "close without a code")
                if inEvidence, let route = f.route {
                    out.evidence[i].add(route: route.string, requests: 1, failed: failed)
                    if failed { out.evidence[i].errorIdentities.addBounded(identity, 1) }
                }
                if let side {
                    out.evidence[i].comparison.addRequest(
                        side, route: f.route?.string ?? "-", host: nil, appVersion: appVersion, weight: 1, failed: failed,
                        failureClass: failed ? "websocket_abnormal" : "websocket_close", identity: failed ? identity : "")
                }
            case .request:
                guard let verdict = p.failure.verdict(status: f.status, outcome: f.outcome, error: f.error?.bytes) else { continue }
                let failed = p.latencyMs.map { f.durationMs! > $0 } ?? verdict
                let weight = failed ? 1 : f.weight
                out.runs[i].add(bucket: b, requests: weight, failures: failed ? 1 : 0)
                if let group { out.groups[i][group, default: BucketRun()].add(bucket: b, requests: weight, failures: failed ? 1 : 0) }
                if inEvidence, let route = f.route {
                    out.evidence[i].add(route: route.string, requests: weight, failed: failed)
                    if failed { out.evidence[i].errorIdentities.addBounded(Self.identity(f, p), 1) }
                }
                if let side {
                    out.evidence[i].comparison.addRequest(
                        side, route: f.route?.string ?? "-", host: f.host?.string, appVersion: appVersion, weight: weight, failed: failed,
                        failureClass: p.latencyMs != nil ? "slow" : f.outcome.rawValue, identity: failed ? Self.identity(f, p) : "")
                }
            case .decodeFailure:
                if p.decodeFailures, p.latencyMs == nil {
                    out.runs[i].add(bucket: b, requests: 0, failures: 1)
                    if let group { out.groups[i][group, default: BucketRun()].add(bucket: b, requests: 0, failures: 1) }
                    if let side {
                        let entity = f.entity?.string ?? "?"
                        let path = f.path.map { TraceEvent.DecodeFailure.foldIndices($0.string) } ?? ""
                        out.evidence[i].comparison.addDecodeFailure(
                            side, route: f.route?.string, appVersion: appVersion, decodePath: path.isEmpty ? entity : "\(entity) \(path)")
                    }
                }
                if inEvidence {
                    let entity = f.entity?.string ?? "?"
                    let path = f.path.map { TraceEvent.DecodeFailure.foldIndices($0.string) } ?? "(no path)"
                    out.evidence[i].decodePaths.addBounded("\(entity) \(path)", 1)
                }
            default:
                if inEvidence, let identity = f.identity {
                    out.evidence[i].errorIdentities.addBounded(identity.string, 1)
                }
            }
        }
    }

    /// Groups a file's scan holds at most before trimming back to `max_groups`: room for groups
    /// that show up late (a busy route first seen after many rare ones) to prove themselves.
    static func scanCapacity(_ maxGroups: Int) -> Int { max(4 * maxGroups, maxGroups + 64) }

    /// Keeps the `maxGroups` groups with the most requests and failures (failures counting twice,
    /// then by key), and adds the rest to `(other)`: a file's groups stay bounded whatever the
    /// number of distinct routes, and nothing is lost.
    static func trim(_ groups: inout [String: BucketRun], to maxGroups: Int) {
        var other = groups.removeValue(forKey: AlertGroup.otherCountingKey) ?? BucketRun()
        var ranked: [(key: String, weight: Double)] = []
        ranked.reserveCapacity(groups.count)
        for (key, run) in groups {
            let weight: Double = run.requests.reduce(0, +) + run.failures.reduce(0, +)
            ranked.append((key: key, weight: weight))
        }
        ranked.sort { a, b in a.weight != b.weight ? a.weight > b.weight : a.key < b.key }
        for entry in ranked.dropFirst(maxGroups) { other.merge(groups.removeValue(forKey: entry.key)!) }
        groups[AlertGroup.otherCountingKey] = other
    }

    /// The counting key of an event's group (``AlertGroup/countingKey(_:)``): its route, host and
    /// app version as the rule's keys ask, `-` for a field the event lacks.
    @inline(__always) static func groupKey(_ f: TraceRecord, keys: [AlertGroup.Key], appVersion: String) -> String {
        // One key (the usual `group_by: [route]`): the value itself, made once, without the join.
        if keys.count == 1, keys[0] != .appVersion { return singleKey(keys[0] == .route ? f.route : f.host) }
        return AlertGroup.countingKey(keys.map { key in
            switch key {
            case .route: f.route?.string ?? "-"
            case .host: f.host?.string ?? "-"
            case .appVersion: appVersion
            }
        })
    }

    /// The counting key of one text value: the text, unless it holds U+0001 or U+0002 (as UTF-8
    /// bytes 1 and 2), which ``AlertGroup/countingKey(_:)`` replaces.
    @inline(__always) static func singleKey(_ text: RawText?) -> String {
        guard let text else { return "-" }
        if !text.hasEscapes, !text.bytes.contains(where: { $0 < 3 }) { return String(decoding: text.bytes, as: UTF8.self) }
        return AlertGroup.countingKey([text.string])
    }

    /// What a failed request is listed as in the evidence.
    private static func identity(_ f: TraceRecord, _ p: RulePattern) -> String {
        p.latencyMs != nil ? "slower than \(Int(p.latencyMs!)) ms" : f.error?.string ?? f.status.map { "HTTP \($0)" } ?? "transport failure"
    }
}
